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
