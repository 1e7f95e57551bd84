"""One resolver of re-exports (``codemods/reexports.resolve``) for its three readers: the
Estimator subclasses' (``reexport:`` facts), the repository's TensorFlow aliases
(``tf_aliases``: ``tf-alias:`` re-exports) and a named import of one in a file that imports no
TensorFlow (``star_imports``: the modules' texts). Each reader keeps its depth: four re-exports
for a class, three for a TensorFlow alias."""

from __future__ import annotations

from typing import Optional

from npu_codemod.codemods.reexports import DEPTH, TF_HOPS, Reexports, is_foreign, reexport_facts, resolve
from npu_codemod.codemods.star_imports import _Modules
from npu_codemod.codemods.tf_aliases import alias_facts, repository_aliases

#: ``pkg.a`` re-exports ``x`` from ``pkg.b``, which re-exports it from ``pkg.c``, ...
CHAIN = {f"pkg.{module}": {"x": [f"pkg.{after}.x"]} for module, after in zip("abcde", "bcdef")}


def _owner(module: str, package: tuple[str, ...]):  # type: ignore[no-untyped-def]
    bound = CHAIN.get(module)
    return None if bound is None else (module, bound, tuple(module.split(".")))


def _find(end: str):  # type: ignore[no-untyped-def]
    def find(target: str, package: tuple[str, ...]) -> Optional[str]:
        return f"found {target}" if target == end else None
    return find


def test_a_name_is_followed_as_deep_as_its_reader_asks() -> None:
    assert resolve("pkg.a.x", (), _find("pkg.a.x"), _owner, 0) == "found pkg.a.x"  # found at once
    assert resolve("pkg.a.x", (), _find("pkg.d.x"), _owner, 3) == "found pkg.d.x"  # three re-exports
    assert resolve("pkg.a.x", (), _find("pkg.e.x"), _owner, 3) is None  # a fourth is one too many
    assert resolve("pkg.a.x", (), _find("pkg.e.x"), _owner, 4) == "found pkg.e.x"
    assert (TF_HOPS, DEPTH) == (3, 4)


def test_a_cycle_of_re_exports_ends() -> None:
    def owner(module: str, package: tuple[str, ...]):  # type: ignore[no-untyped-def]
        cycle = {"p.a": {"x": ["p.b.x"]}, "p.b": {"x": ["p.a.x"]}}
        return (module, cycle[module], ()) if module in cycle else None
    assert resolve("p.a.x", (), _find("nowhere"), owner, 10) is None


TP = {"tp/__init__.py": "from .compat import tfv1\n",
      "tp/compat/__init__.py": "import tensorflow as tf\n\ntfv1 = tf.compat.v1\n"}


def test_the_three_readers_follow_one_package_s_re_export_alike() -> None:
    """tensorpack's ``from tp import tfv1``: each reader's own data, one resolver."""
    facts = frozenset().union(*(reexport_facts(path, text) | alias_facts(path, text) for path, text in TP.items()))
    classes = Reexports(facts)  # the Estimator subclasses' reader: a name of the repository
    assert classes.resolve("tp.tfv1", ("examples",), lambda name, _: name if name == "tp.compat.tfv1" else None) \
        == "tp.compat.tfv1"
    assert repository_aliases(facts)["tp.tfv1"] == "tensorflow.compat.v1"
    assert _Modules(TP.get).binds_tf("tp", "examples/export.py", "tfv1") == "tensorflow.compat.v1"


def test_one_test_says_which_modules_are_not_the_repository_s() -> None:
    assert all(map(is_foreign, ["tensorflow.compat", "tensorflow_estimator", "npu_bridge.estimator",
                                "npu_device", "__future__"]))
    assert not any(map(is_foreign, ["tp.compat", "tensorpack", "mylib.tensorflow"]))
    init = "from __future__ import print_function\nfrom tensorflow.compat import v1 as tfv1\nfrom .x import y\n"
    assert reexport_facts("pkg/__init__.py", init) == {"reexport:pkg|y|pkg.x.y"}
