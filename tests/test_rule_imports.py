"""Rules are written on the rule API, and every package ships in a non-editable install.

Every module under ``plugins/rules/`` (the built-in rule packs) may import ``npu_codemod.api``,
the packs' shared private toolkit ``npu_codemod.api._toolkit`` (a private module of the API
package: it alone reaches into the engine), the standard library and modules of its own pack:
nothing of the engine (``npu_codemod.codemods``), of fissix or Bowler, of another pack, or any
other npu_codemod module; no module under ``plugins/rules/`` is exempt.

``[tool.setuptools] packages`` must list every folder with an ``__init__.py`` under the
package directories: an editable install finds an unlisted one, a wheel leaves it out.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Iterator

from npu_codemod import api

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "plugins" / "rules"
RULES_PACKAGE = "npu_codemod.plugins.rules"
API = "npu_codemod.api"
#: The built-in packs' shared private module (not public), beside the API it extends.
TOOLKIT = f"{API}._toolkit"
#: Third-party packages a rule must not import directly (the engine's own toolkit).
ENGINE_LIBRARIES = ("fissix", "bowler", "lib2to3")


def module_name(path: Path, root: Path, package: str) -> str:
    """The dotted name of the module at ``path`` in the package whose folder is ``root``."""
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((package, *parts))


def imported(path: Path, root: Path) -> Iterator[tuple[int, str, str]]:
    """(line, module as resolved, what is imported) of each import of a rule module:
    ``from . import x`` imports ``<package>.x``, ``from m import f`` imports ``m.f``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    name = module_name(path, root, RULES_PACKAGE)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield from ((node.lineno, module, f"{module}.{alias.name}") for alias in node.names)


def pack_of(path: Path, root: Path) -> str:
    """The pack the rule module at ``path`` belongs to (``npu_codemod.plugins.rules.sess_run``
    for the modules of ``sess_run/``); the rules package itself for a module directly in it."""
    parts = path.relative_to(root).parts
    return f"{RULES_PACKAGE}.{parts[0]}" if len(parts) > 1 else RULES_PACKAGE


def forbidden(name: str, pack: str = RULES_PACKAGE) -> bool:
    """May a module of ``pack`` not import ``name`` (a module, or a name of one)?"""
    top = name.partition(".")[0]
    if top == "npu_codemod":
        allowed = (API, TOOLKIT) if pack == RULES_PACKAGE else (API, TOOLKIT, pack)
        return not any(name == module or name.startswith(module + ".") for module in allowed)
    if top in ENGINE_LIBRARIES:
        return True
    stdlib = getattr(sys, "stdlib_module_names", None)  # Python 3.10+
    return stdlib is not None and top not in stdlib and top != "__future__"


def bad_imports(root: Path) -> list[str]:
    """``file:line: imports module`` for each import of a module under ``root`` (the folder of
    ``npu_codemod.plugins.rules``) that a rule may not make."""
    found = {f"{path.relative_to(root)}:{line}: imports {module}": None
             for path in sorted(root.rglob("*.py"))
             for line, module, name in imported(path, root)
             if forbidden(name, pack_of(path, root))}
    return list(found)


def test_rule_modules_import_only_the_api_the_toolkit_and_their_pack() -> None:
    assert bad_imports(RULES) == []


def test_the_check_names_each_import_a_rule_must_not_make(tmp_path: Path) -> None:
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "__init__.py").write_text("from .npu900_bad import hookimpl\n")
    (tmp_path / "_toolkit.py").write_text("from npu_codemod.codemods.walk import pre_order\n")
    (tmp_path / "pack" / "npu900_bad.py").write_text(
        "from __future__ import annotations\n"
        "import os.path\n"
        "from fissix import pytree\n"
        "import bowler.query\n"
        "from npu_codemod.api import Rule, hookimpl\n"
        "from npu_codemod import api, codemods\n"
        "from npu_codemod.codemods.walk import pre_order\n"
        "from npu_codemod.plugins.hookspecs import hookimpl as spec\n"
        "from . import _support\n"
        "from ._support import helper\n"
        "from ..other_pack import shared\n"
        "from ... import hookspecs\n"
        "from ....codemods.scopes import uses\n"
        "from npu_codemod.api._toolkit import pre_order as walk\n"
        "from .._toolkit import uses as used\n"
        "from .. import _toolkit\n"
        "from npu_codemod.plugins.rules.other_pack._private import helper as theirs\n"
        "def f():\n"
        "    import fissix.pytree\n"
        "    import tensorflow\n"
    )
    assert bad_imports(tmp_path) == ["_toolkit.py:1: imports npu_codemod.codemods.walk"] + [
        f"{Path('pack', 'npu900_bad.py')}:{line}" for line in (
        "3: imports fissix",
        "4: imports bowler.query",
        "6: imports npu_codemod",
        "7: imports npu_codemod.codemods.walk",
        "8: imports npu_codemod.plugins.hookspecs",
        "11: imports npu_codemod.plugins.rules.other_pack",
        "12: imports npu_codemod.plugins",
        "13: imports npu_codemod.codemods.scopes",
        "15: imports npu_codemod.plugins.rules._toolkit",
        "16: imports npu_codemod.plugins.rules",
        "17: imports npu_codemod.plugins.rules.other_pack._private",
        "19: imports fissix.pytree",
        "20: imports tensorflow",
    )]


def test_a_module_directly_under_the_rules_package_may_import_no_pack(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("from .sess_run import _datasets\nfrom ._toolkit import uses\n")
    assert bad_imports(tmp_path) == ["helpers.py:1: imports npu_codemod.plugins.rules.sess_run",
                                     "helpers.py:2: imports npu_codemod.plugins.rules._toolkit"]


def npu_codemod_imports(path: Path) -> list[str]:
    """The npu_codemod modules (and names of them) a file imports."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [f"{node.module}.{alias.name}" for alias in node.names]
    return [name for name in found if name.partition(".")[0] == "npu_codemod"]


def test_the_example_plugin_uses_only_the_public_api_and_the_testing_helpers() -> None:
    example = ROOT / "examples" / "npu-codemod-example-rule"
    rules = [name for path in sorted((example / "src").rglob("*.py")) for name in npu_codemod_imports(path)]
    tests = [name for path in sorted((example / "tests").rglob("*.py")) for name in npu_codemod_imports(path)]
    assert rules and all(name.startswith(API + ".") for name in rules), rules
    assert tests and all(name.startswith("npu_codemod.testing.") for name in tests), tests
    assert {name.rpartition(".")[2] for name in rules} <= set(api.__all__)


def package_dirs() -> tuple[list[str], dict[str, str]]:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    return setuptools["packages"], setuptools["package-dir"]


def test_every_package_folder_is_listed_in_pyproject() -> None:
    listed, directories = package_dirs()
    found = set()
    for package, directory in directories.items():
        root = ROOT / directory
        found |= {module_name(path, root, package) for path in root.rglob("__init__.py")}
    assert sorted(found - set(listed)) == []


def test_every_listed_package_is_a_folder() -> None:
    listed, directories = package_dirs()
    missing = []
    for package in listed:
        owner = max((name for name in directories if package == name or package.startswith(name + ".")),
                    key=len)
        folder = ROOT / directories[owner] / package[len(owner):].lstrip(".").replace(".", "/")
        if not folder.is_dir():
            missing.append(package)
    assert missing == []
