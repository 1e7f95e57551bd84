"""``KnownNames.nearest`` answers as ``nearest_name`` does: the class analyses of a repository
with thousands of classes look each base up through it instead of reading every name."""

from __future__ import annotations

import itertools

from npu_codemod.codemods.modules import KnownNames, nearest_name

#: Module-qualified classes as a model garden's facts name them: the same class name in several
#: folders, a name that ends another one, top-level modules and deep ones.
CLASSES = (
    "tensor2tensor.models.transformer.Transformer",
    "tensor2tensor.models.research.transformer_vae.Transformer",
    "tensor2tensor.models.evolved_transformer.EvolvedTransformer",
    "tensor2tensor.utils.t2t_model.T2TModel",
    "tensor2tensor.layers.common_layers.Conv",
    "tensor2tensor.layers.modalities.Conv",
    "official.resnet.resnet_model.Model",
    "official.resnet.imagenet_main.ImagenetModel",
    "modeling.BertModel",
    "run_classifier.BertModel",
    "estimator.MyEstimator",
    "models.estimator.MyEstimator",
    "models.base.BaseEstimator",
)
TARGETS = ("Transformer", "transformer.Transformer", "models.transformer.Transformer",
           "t2t_model.T2TModel", "T2TModel", "Conv", "common_layers.Conv", "Model",
           "resnet_model.Model", "ImagenetModel", "BertModel", "modeling.BertModel",
           "MyEstimator", "estimator.MyEstimator", "base.BaseEstimator", "BaseEstimator",
           "tf.estimator.Estimator", "Missing", "odel", "")
PACKAGES = ((), ("tensor2tensor",), ("tensor2tensor", "models"), ("tensor2tensor", "models", "research"),
            ("tensor2tensor", "layers"), ("official", "resnet"), ("models",), ("models", "estimator"),
            ("run_classifier",), ("elsewhere", "deep", "down"))


def test_nearest_is_nearest_name_for_every_target_and_folder() -> None:
    known = KnownNames(CLASSES)
    answers = {(target, package): nearest_name(target, package, frozenset(CLASSES))
               for target, package in itertools.product(TARGETS, PACKAGES)}
    assert {key: known.nearest(*key) for key in answers} == answers
    # the look-up is exercised on every kind of answer: nearest folder, single ending, none
    assert answers["transformer.Transformer", ("tensor2tensor", "models")] \
        == "tensor2tensor.models.transformer.Transformer"
    assert answers["T2TModel", ()] == "tensor2tensor.utils.t2t_model.T2TModel"
    assert answers["Conv", ()] is None  # two classes end so: ambiguous
    assert answers["estimator.MyEstimator", ("models",)] == "models.estimator.MyEstimator"
    assert answers["estimator.MyEstimator", ()] == "estimator.MyEstimator"
    assert answers["Missing", ("models",)] is None


def test_names_are_kept_as_given() -> None:
    assert KnownNames(CLASSES).names == frozenset(CLASSES)
    assert KnownNames(()).nearest("Model", ("official",)) is None


def test_imported_module_answers_alike_from_a_set_and_from_known_names() -> None:
    """The import graphs (``program_graph.Graph``, the Horovod pack's) resolve every import of
    every module through ``KnownNames``: a repository of thousands of modules compared each
    unresolved import (``numpy``, ``os.path``) with every module name before."""
    from npu_codemod.codemods.program_graph import imported_module

    modules = frozenset(name.rpartition(".")[0] for name in CLASSES)
    known = KnownNames(modules)
    imports = (*TARGETS, "transformer", "models.transformer", "resnet_model", "numpy.linalg",
               "research.transformer_vae.Transformer", "utils.t2t_model.T2TModel", "layers.Conv")
    answers = {(target, package): imported_module(target, package, modules)
               for target, package in itertools.product(imports, PACKAGES)}
    assert {key: imported_module(key[0], key[1], known) for key in answers} == answers
    assert answers["resnet_model", ()] == "official.resnet.resnet_model"  # the single ending so
    assert answers["transformer", ("tensor2tensor", "models")] == "tensor2tensor.models.transformer"
    assert answers["t2t_model.T2TModel", ()] == "tensor2tensor.utils.t2t_model"  # a member's module
    assert answers["numpy.linalg", ()] is None


def test_graph_edges_resolve_each_import_as_imported_module_does() -> None:
    from npu_codemod.codemods.program_graph import Graph, Node, imported_module

    nodes = {}
    for number in range(60):
        path = f"pkg{number % 5}/sub{number % 3}/mod{number}.py"
        imports = ("numpy", "os.path", f"pkg{(number + 1) % 5}.sub{(number + 1) % 3}.mod{number + 1}",
                   f"mod{number + 2}", f"sub{number % 3}.mod{number + 3}", "pkg1")
        node = Node(path, False, False, False, True, imports)
        nodes[node.module] = node
    graph = Graph(nodes)
    names = set(nodes) | graph.packages
    for node in nodes.values():
        package = tuple(node.path.split("/")[:-1])
        expected = [imported_module(target, package, names) for target in node.imports]
        assert graph.edges(node) == tuple(dict.fromkeys(name for name in expected if name))
    # numpy and os.path: none; mod2 and sub0.mod3: the single module ending so; pkg1: a package
    assert graph.edges(nodes["pkg0.sub0.mod0"]) == ("pkg1.sub1.mod1", "pkg2.sub2.mod2", "pkg3.sub0.mod3", "pkg1")

