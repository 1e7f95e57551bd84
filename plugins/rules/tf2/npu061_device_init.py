"""NPU061 tf2-device-init: the entry script of a TF 2.x program opens the NPU first.

The TF 2.6 guide's first step ("Setting NPU as default device"): at the very beginning of the
script, before other packages are imported, ``import npu_device as npu`` and
``npu.open().as_default()``, so that no op is dispatched to another device while the script's
other packages load.

Entry scripts are the files with a module-level ``if __name__ == "__main__":`` block that train
(a ``GradientTape``, a ``tf.function``, Keras ``compile``/``fit``, ``apply_gradients`` or
``minimize``) or import a module of the repository that does (the repository-wide analysis
names those modules: facts ``npu061-training:<module>``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Optional

from npu_codemod.api import (
    Base,
    FileContext,
    Node,
    Rule,
    hookimpl,
    tokens,
)
from npu_codemod.plugins.rules._toolkit import (
    TF2,
    TF_NEUTRAL,
    block_statements,
    compound_body,
    header_index,
    imported_names,
    main_block,
    module_ast,
    module_parts,
    nearest_name,
    position,
    tree_text,
)

from ._header import device_binding, device_import, device_name, insert_at_header

TRAINING_FACT = "npu061-training:"
#: Text that only training code spells (cheap: read on every TF file of the repository).
TRAINING = re.compile(r"\bGradientTape\b|\.apply_gradients\(|\.minimize\(|\.fit\(|\.compile\(|"
                      r"@\s*(?:tf\.)?function\b|\btf\.function\(")
_OPEN = re.compile(r"^\s*(\w+)\.open\([^()]*\)(\.as_default\(\s*\))?\s*$")
#: Environment the adapter reads when ``npu.open()`` runs, and what must precede the import.
OPEN_ENV = ("ASCEND_DEVICE_ID", "RANK_ID", "RANK_SIZE", "RANK_TABLE_FILE")
IMPORT_ENV = ("NPU_LOOP_SIZE",)
_ENV_SET = re.compile(r"os\.(?:environ\s*\[\s*(['\"])(?P<a>\w+)\1\s*\]\s*=(?!=)|environ\.setdefault\(\s*"
                      r"(['\"])(?P<b>\w+)\3|putenv\(\s*(['\"])(?P<c>\w+)\5)")

_LAYOUT = frozenset({tokens.NEWLINE, tokens.INDENT, tokens.DEDENT, tokens.ENDMARKER})

ADDED = "added '{imp}' and '{name}.open().as_default()' at the top of the entry script"
IN_PLACE = "the NPU device is opened as the default device first"
TWICE = ("duplicate {name}.open().as_default(): harmless (open on the same device returns the "
         "existing instance), remove one")
NOT_DEFAULT = ("{name}.open() without .as_default(): ops are not placed on the NPU; call "
               "{name}.open().as_default()")
TOO_LATE = ("move import npu_device as npu; npu.open().as_default() above all other imports "
            "(ops created before it run on another device)")
NO_TRAINING = ("TF 2.x script without training code: add the NPU device init if it should run "
               "on the NPU (import npu_device as npu; npu.open().as_default() at the top)")
ENV_AFTER_OPEN = "set {var} in the launcher or above npu.open(): npu.open() reads it when it runs"
ENV_AFTER_IMPORT = "set {var} in the launcher or above import npu_device: it is read at import"


class DeviceInit(Rule):
    id = "NPU061"
    name = "tf2-device-init"
    pack = "tf2"
    file_kinds = frozenset({TF2, TF_NEUTRAL})
    description = "Open the NPU as the default device at the top of each TF 2.x entry script."
    guide_section = "设置NPU为默认设备"
    guide_section_en = "Setting NPU as Default Device"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`import npu_device as npu` and `npu.open().as_default()` at the top of every "
                "entry script of a TF 2.x program (a file with a module-level `if __name__ == "
                "\"__main__\":` block that trains, or imports a module of the repository that "
                "trains): after the shebang/encoding lines, the docstring and `from __future__` "
                "imports, before every other import. A file that binds `npu` to something else "
                "gets `import npu_device` and `npu_device.open().as_default()`. Already there "
                "(any alias, at the top or first in the `__main__` block): left alone.")
    reports = ("`open()` without `.as_default()`; an init placed after other imports or "
               "statements (never moved automatically); `ASCEND_DEVICE_ID`, `RANK_ID`, "
               "`RANK_SIZE`, `RANK_TABLE_FILE` set in the script (after the init), "
               "`NPU_LOOP_SIZE` set after `import npu_device`; a TF 2.x `__main__` script "
               "without training code.")
    example = """
        \"\"\"Train a Keras classifier.\"\"\"
        import os

        import tensorflow as tf


        def main(epochs):
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(tf.random.normal([64, 4]), tf.random.normal([64, 10]), epochs=epochs)


        if __name__ == "__main__":
            os.environ["ASCEND_DEVICE_ID"] = "0"
            main(3)
    """
    after = ("NPU065",)  # it places the import NPU065 may ask for, once

    def finish(self, tree: Node, ctx: FileContext) -> None:
        main = main_block(tree)
        if main is None:
            return
        opens = _open_calls(tree, main, ctx)
        if opens:
            self._check_existing(tree, main, opens, ctx)
        elif not _trains(ctx):
            ctx.report(main, "unmigrated", NO_TRAINING, level="note")
            return
        else:
            name = device_name(ctx)
            index = header_index(tree)
            line, column = position(tree.children[index]) if index < len(tree.children) else (1, 0)
            code = ("" if device_binding(ctx) else device_import(name) + "\n") + f"{name}.open().as_default()\n"
            insert_at_header(tree, code, ctx.newline)
            ctx.report_at(line, column, "migrated", ADDED.format(imp=device_import(name), name=name))
        _check_environment(tree, ctx)

    def _check_existing(self, tree: Node, main: Node, opens: list[tuple[Base, str, bool]],
                        ctx: FileContext) -> None:
        statement, name, default = opens[0]
        if not default:
            ctx.report(statement, "unmigrated", NOT_DEFAULT.format(name=name))
        elif not _first(tree, main, statement, ctx):
            ctx.report(statement, "unmigrated", TOO_LATE)
        else:
            ctx.report(statement, "migrated", IN_PLACE)
        for statement, name, _ in opens[1:]:
            ctx.report(statement, "migrated", TWICE.format(name=name))


def _open_calls(tree: Node, main: Node, ctx: FileContext) -> list[tuple[Base, str, bool]]:
    """``(statement, name, with .as_default())`` of each module-level (or first-level
    ``__main__``) ``<npu_device>.open(...)`` statement."""
    bound = {name for name, target in ctx.names("npu_device").bindings.items() if target == "npu_device"}
    found = []
    for statement in [*tree.children, *block_statements(compound_body(main))]:
        match = _OPEN.match(tree_text(statement).strip())
        if match and match.group(1) in bound:
            found.append((statement, match.group(1), bool(match.group(2))))
    return found


def _first(tree: Node, main: Node, statement: Base, ctx: FileContext) -> bool:
    """Is ``statement`` preceded only by the header, ``npu_device`` imports and (inside the
    ``__main__`` block) nothing?"""
    holder = statement.parent
    siblings = [child for child in (holder.children if holder is not None else [])
                if child.type not in _LAYOUT and tree_text(child).strip()]
    before = siblings[:siblings.index(statement)] if statement in siblings else []
    if holder is tree:
        before = before[header_index(tree):]
    return all("npu_device" in tree_text(child) for child in before)


def _trains(ctx: FileContext) -> bool:
    """Does the file train, or import a repository module that trains (the analysis' facts)?"""
    if TRAINING.search(ctx.original):
        return True
    known = {fact[len(TRAINING_FACT):] for fact in ctx.facts if fact.startswith(TRAINING_FACT)}
    if not known:
        return False
    tree = module_ast(ctx.original)
    if tree is None:
        return False
    # A package holding a module that trains counts: ``from retinanet import Executor`` where
    # ``retinanet/__init__.py`` re-exports ``retinanet.executor.Executor``.
    packages = {".".join(name.split(".")[:end]) for name in known
                for end in range(1, name.count(".") + 1)}
    package = module_parts(ctx.path)[:-1]
    for target in imported_names(tree, ctx.path).values():
        for candidate in (target, target.rpartition(".")[0]):
            if candidate and nearest_name(candidate, package, known | packages) is not None:
                return True
    return False


def _check_environment(tree: Node, ctx: FileContext) -> None:
    """Environment the adapter reads, set in the script after the init (it runs first)."""
    for line_number, line in enumerate(ctx.original.splitlines(), start=1):
        match = _ENV_SET.search(line)
        var = match and (match.group("a") or match.group("b") or match.group("c"))
        if var in OPEN_ENV:
            ctx.report_at(line_number, match.start() if match else 0, "unmigrated",
                          ENV_AFTER_OPEN.format(var=var))
        elif var in IMPORT_ENV:
            ctx.report_at(line_number, match.start() if match else 0, "unmigrated",
                          ENV_AFTER_IMPORT.format(var=var))


def training_module(path: str, text: str) -> Optional[str]:
    """The fact naming the module at ``path`` when its ``text`` trains, else None."""
    if not TRAINING.search(text):
        return None
    return TRAINING_FACT + ".".join(module_parts(str(PurePosixPath(path))))


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[frozenset[str]]:
    fact = training_module(path, text)
    return frozenset({fact}) if fact else None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [DeviceInit()]
