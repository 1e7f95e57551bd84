"""How an import is resolved and how imports are followed: one way for NPU061's program graph
(``codemods/program_graph``) and NPU021's Horovod graph (``plugins/rules/distributed/
horovod_graph``), which reaches them through ``api._toolkit``."""

from __future__ import annotations

from npu_codemod.api import _toolkit
from npu_codemod.codemods import program_graph

MODULES = {"main", "lib", "lib.setup", "lib.model", "tools.lib.setup"}


def test_an_import_runs_the_module_or_the_module_it_names_a_member_of() -> None:
    assert program_graph.imported_module("lib.setup", (), MODULES) == "lib.setup"
    assert program_graph.imported_module("lib.setup.init_hvd", (), MODULES) == "lib.setup"  # a function
    assert program_graph.imported_module("lib.setup", ("tools",), MODULES) == "tools.lib.setup"  # nearest
    assert program_graph.imported_module("numpy.linalg", (), MODULES) is None


def test_imports_are_followed_breadth_first_with_where_each_was_reached_from() -> None:
    edges = {"main": ["lib.setup", "lib"], "lib.setup": ["lib.model"], "lib": ["lib.model", "main"]}
    asked: list[str] = []

    def imports(module: str) -> list[str]:
        asked.append(module)
        return edges.get(module, [])

    assert program_graph.reached_from("main", imports) == {
        "main": None, "lib.setup": "main", "lib": "main", "lib.model": "lib.setup"}
    assert sorted(asked) == ["lib", "lib.model", "lib.setup", "main"]  # each once


def test_the_distributed_pack_reaches_them_through_the_toolkit() -> None:
    assert _toolkit.imported_module is program_graph.imported_module
    assert _toolkit.reached_from is program_graph.reached_from
    from npu_codemod.plugins.rules.distributed import horovod_graph
    assert horovod_graph.reached_from is program_graph.reached_from
