"""Rules are written on the public API only, and every package ships in a non-editable install.

Every module under ``plugins/rules/`` (the built-in rule packs) may import ``npu_codemod.api``,
the standard library and, relatively, modules of ``plugins/rules/``: nothing of the engine
(``npu_codemod.codemods``), of fissix or Bowler, or any other npu_codemod module. What the
built-in rules need, a third-party rule can then have too.

``[tool.setuptools] packages`` must list every folder with an ``__init__.py`` under the
package directories: an editable install finds an unlisted one, a wheel leaves it out.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Iterator

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "plugins" / "rules"
RULES_PACKAGE = "npu_codemod.plugins.rules"
API = "npu_codemod.api"
#: Third-party packages a rule must not import directly (the engine's own loaded_rules).
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


def forbidden(name: str) -> bool:
    """May a rule module not import ``name`` (a module, or a name of one)?"""
    top = name.partition(".")[0]
    if top == "npu_codemod":
        return not any(name == allowed or name.startswith(allowed + ".") for allowed in (API, RULES_PACKAGE))
    if top in ENGINE_LIBRARIES:
        return True
    stdlib = getattr(sys, "stdlib_module_names", None)  # Python 3.10+
    return stdlib is not None and top not in stdlib and top != "__future__"


def bad_imports(root: Path) -> list[str]:
    """``file:line: imports module`` for each import of a module under ``root`` (the folder of
    ``npu_codemod.plugins.rules``) that a rule may not make."""
    found = {f"{path.relative_to(root)}:{line}: imports {module}": None
             for path in sorted(root.rglob("*.py"))
             for line, module, name in imported(path, root) if forbidden(name)}
    return list(found)


def test_rule_modules_import_only_the_public_api() -> None:
    assert bad_imports(RULES) == []


def test_the_check_names_each_import_a_rule_must_not_make(tmp_path: Path) -> None:
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "__init__.py").write_text("from .npu900_bad import hookimpl\n")
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
        "def f():\n"
        "    import fissix.pytree\n"
        "    import tensorflow\n"
    )
    assert bad_imports(tmp_path) == [f"{Path('pack', 'npu900_bad.py')}:{line}" for line in (
        "3: imports fissix",
        "4: imports bowler.query",
        "6: imports npu_codemod",
        "7: imports npu_codemod.codemods.walk",
        "8: imports npu_codemod.plugins.hookspecs",
        "12: imports npu_codemod.plugins",
        "13: imports npu_codemod.codemods.scopes",
        "15: imports fissix.pytree",
        "16: imports tensorflow",
    )]


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
