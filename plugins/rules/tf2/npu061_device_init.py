"""NPU061 tf2-device-init: the entry script of a TF 2.x program opens the NPU first.

The TF 2.6 guide's first step ("Setting NPU as default device"): at the very beginning of the
script, before other packages are imported, ``import npu_device as npu`` and
``npu.open().as_default()``, so that no op is dispatched to another device while the script's
other packages load.

Entry scripts are decided for the whole repository (``codemods/tf_programs``, facts
``tf2-entry:<path>``): the files listed in ``[tool.npu-codemod] entry``, else the files with a
module-level ``if __name__ == "__main__":`` block whose import closure, followed transitively
through every Python file, holds TF 2.x training code (a ``GradientTape``, Keras
``compile``/``fit``/``fit_generator``/``train_on_batch``, ``apply_gradients`` or ``minimize``;
a ``tf.function`` alone is none: libraries trace inference, export and data helpers too) that
the script runs: its own, or a function or class of the closure it uses (``codemods/
training_calls``: a tool that imports its repository's package and calls none of its trainer
trains nothing, and is reported); such a script may itself import no TensorFlow. Our deviation from the spec, in the user's favour: a TensorFlow file with no
``__main__`` block whose module-level code trains (``codemods/module_training``: Horovod's TF 2.x
benchmarks) is an entry too, unless another file of the repository imports it or it is a test
file. Programs that mix eager TF 2.x and compat.v1 files are reported there, not rewritten; the
findings about programs (no entry, mixed programs, a bad ``entry`` setting, a module that trains
when imported and that no entry reaches) are this rule's. Without the repository's analysis (a
file checked alone) the file decides: it has a ``__main__`` block and trains, or imports a module
that does (facts ``npu061-training:<module>``), or it has none and its module-level code trains.
Either way a TFLite conversion script is decided from what it runs, and a file checked alone
whose only training text is ``.fit(`` from its receivers (``codemods/script_training``).

An entry that imports TensorFlow only inside functions (``codemods/function_tf``: a script whose
``main_fun`` a cluster launcher such as TensorFlowOnSpark's ``TFCluster.run`` ships to its
workers) trains in the process that runs that function, not in the one that runs the module top
(the driver). The spec's "at the very beginning of the script, before other packages are
imported" is read for that process: when one module-level function holds every such import and
trains, the init goes first in its body (after its docstring, before its imports, the guide's
order); when it is not that clear (several such functions, a method), it is reported, never put
at the module top. Rules writing ``npu.*`` code in such a file import ``npu_device`` in the
function too (``device_name_at``).
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath
from typing import Optional

from npu_codemod.api import (
    Base,
    FileContext,
    Node,
    Rule,
    hookimpl,
    insert_after,
    tokens,
)
from npu_codemod.api._toolkit import (
    NON_TF,
    TF2,
    TF_NEUTRAL,
    TRAINING_TEXT,
    Function,
    bind_in_function,
    block_statements,
    compound_body,
    device_binding,
    device_function,
    device_import,
    device_name,
    function_names,
    header_index,
    imported_names,
    main_block,
    module_ast,
    module_parts,
    nearest_name,
    opened_in,
    position,
    tf_import_functions,
    top_function,
    trains_alone,
    trains_when_run,
    tree_text,
)

from ._header import insert_at_header

TRAINING_FACT = "npu061-training:"
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
IN_FUNCTION = ("added '{imp}' and '{name}.open().as_default()' at the top of {function}: the "
               "file imports TensorFlow only there, so the process that runs it trains (the module "
               "top runs in the process that launches it, e.g. a cluster driver)")
OPENED_IN_FUNCTION = "the NPU device is opened in {function}, where TensorFlow is imported"
LOCAL_TF = ("TensorFlow is imported only inside functions ({functions}): open the NPU in the process "
            "that imports TensorFlow and trains, with import npu_device as npu; "
            "npu.open().as_default() at the top of the function that trains, not at the module top "
            "(it runs in the process that launches the workers, e.g. a cluster driver)")
ENV_AFTER_OPEN = "set {var} in the launcher or above npu.open(): npu.open() reads it when it runs"
ENV_AFTER_IMPORT = "set {var} in the launcher or above import npu_device: it is read at import"
OPTIONS_AFTER_OPEN = ("set {name}.global_options() before {name}.open(): options changed after the "
                      "device is opened do not apply")
#: Facts of the repository's analysis (``codemods/tf_programs``): it ran; this path is an entry.
PROGRAMS_DONE = "tf2-programs:done"
ENTRY = "tf2-entry:"
#: The entry of a compat.v1 graph program (``codemods/tf_programs``): no eager TF 2.x init.
COMPAT_ENTRY = "tf2-compat-entry:"


class DeviceInit(Rule):
    id = "NPU061"
    name = "tf2-device-init"
    pack = "tf2"
    file_kinds = frozenset({TF2, TF_NEUTRAL, NON_TF})  # NON_TF: an entry importing no TF
    description = "Open the NPU as the default device at the top of each TF 2.x entry script."
    guide_section = "设置NPU为默认设备"
    guide_section_en = "Setting NPU as Default Device"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`import npu_device as npu` and `npu.open().as_default()` at the top of every "
                "entry script of a TF 2.x program: the files listed in `[tool.npu-codemod] entry` "
                "of the repository's `pyproject.toml`, else each file with a module-level `if "
                "__name__ == \"__main__\":` block whose repository imports, followed "
                "transitively through every Python file, reach TF 2.x training code (Keras "
                "`fit`/`compile`/`train_on_batch`, `GradientTape`, `apply_gradients`/`minimize`; "
                "not a `tf.function` alone) that it runs: its own, or a function or class of "
                "those modules it uses (the script itself may import no TensorFlow), and each "
                "TensorFlow file without one whose "
                "module-level code trains (calls `fit`/`compile`/`GradientTape`/`apply_gradients`/"
                "`minimize`/`train_step`, or a function of the file that does) and that no file "
                "imports (one importing no TensorFlow when what it trains is a Keras model a "
                "function of the repository returns): after the shebang/encoding lines, the docstring and `from __future__` "
                "imports, before every other import. A file that binds `npu` to something else "
                "gets `import npu_device` and `npu_device.open().as_default()`. Already there "
                "(any alias, at the top or first in the `__main__` block): left alone. A script that "
                "imports TensorFlow only inside functions (the `main_fun` a cluster launcher such "
                "as TensorFlowOnSpark's `TFCluster.run` ships to its workers) gets the init first "
                "in the one module-level function that holds those imports and trains, not at "
                "the module top (which runs in the driver).")
    reports = ("`open()` without `.as_default()`; an init placed after other imports or "
               "statements (never moved automatically); `ASCEND_DEVICE_ID`, `RANK_ID`, "
               "`RANK_SIZE`, `RANK_TABLE_FILE` set in the script (after the init), "
               "`NPU_LOOP_SIZE` set after `import npu_device`, `npu.global_options()` used after "
               "`npu.open()`; a TF 2.x `__main__` script that runs no training code (data "
               "conversion, export, validation, doc generation; not the entry of a compat.v1 "
               "graph program: NPU062 ports it); a script that "
               "imports TensorFlow only inside functions when it is not clear which one trains "
               "(several, or a method: open the NPU in the function that trains); a module that "
               "trains when imported and that no entry script reaches. For the repository: no "
               "entry script found; a bad `entry` setting; a program whose entry reaches both "
               "eager TF 2.x and compat.v1 files (nothing in it is rewritten: each of its files "
               "is reported, a compat one under NPU062).")
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
        script = ctx.file_kind == NON_TF
        if PROGRAMS_DONE in ctx.facts:  # the repository's analysis decided
            entry = ENTRY + ctx.path in ctx.facts
        elif main is not None:
            entry = not script and _trains(ctx)
        else:  # no __main__ block: the file alone says nothing imports it
            tree_ast = module_ast(ctx.original)
            entry = not script and tree_ast is not None and trains_when_run(tree_ast)
        if not entry:
            if main is not None and not script and not _open_calls(tree, main, ctx) \
                    and COMPAT_ENTRY + ctx.path not in ctx.facts:  # NPU062 ports that program
                ctx.report(main, "unmigrated", NO_TRAINING, level="note")
            return
        opens = _open_calls(tree, main, ctx)
        tree_ast = module_ast(ctx.original)
        local = tf_import_functions(tree_ast) if tree_ast is not None and not opens else None
        if opens:
            self._check_existing(tree, opens, ctx)
            opened_at = position(opens[0][0])[0]
        elif local is not None and tree_ast is not None:
            opened_at = _open_in_function(tree, tree_ast, local, ctx)
        else:
            name = device_name(ctx)
            index = header_index(tree)
            line, column = position(tree.children[index]) if index < len(tree.children) else (1, 0)
            code = ("" if device_binding(ctx) else device_import(name) + "\n") + f"{name}.open().as_default()\n"
            insert_at_header(tree, code, ctx.newline)
            ctx.report_at(line, column, "migrated", ADDED.format(imp=device_import(name), name=name))
            opened_at = 0
        _check_environment(tree, ctx)
        _check_options(ctx, opened_at)

    def _check_existing(self, tree: Node, opens: list[tuple[Base, str, bool]], ctx: FileContext) -> None:
        statement, name, default = opens[0]
        if not default:
            ctx.report(statement, "unmigrated", NOT_DEFAULT.format(name=name))
        elif not _first(tree, statement):
            ctx.report(statement, "unmigrated", TOO_LATE)
        else:
            ctx.report(statement, "migrated", IN_PLACE)
        for statement, name, _ in opens[1:]:
            ctx.report(statement, "migrated", TWICE.format(name=name))


def _open_in_function(tree: Node, tree_ast: ast.Module, local: list[tuple[Function, ast.stmt]],
                      ctx: FileContext) -> int:
    """The init of a file that imports TensorFlow only inside functions (``local``): already
    in one of them, put at the top of the one that clearly trains, else reported. Returns the
    line it is opened on (0: none)."""
    for function, _ in local:
        line = opened_in(function, ctx.original)
        if line is not None:
            text = ctx.original.splitlines()[line - 1]
            ctx.report_at(line, len(text) - len(text.lstrip()), "migrated",
                          OPENED_IN_FUNCTION.format(function=f"{function.name}()"))
            return line
    chosen = device_function(tree_ast, ctx.original)
    definition = _definition(tree, chosen) if chosen is not None else None
    if chosen is None or definition is None:
        first = local[0][1]
        ctx.report_at(first.lineno, first.col_offset, "unmigrated", LOCAL_TF.format(functions=function_names(local)))
        return 0
    name = device_name(ctx)
    opening = f"{name}.open().as_default()"
    if device_binding(ctx) is None:  # the import first in the function (maybe a rule's already)
        imported = bind_in_function(definition, device_import(name), ctx.newline)
        assert imported is not None  # device_function: not a one-line body
        insert_after(imported, opening, ctx.newline)
    else:
        bind_in_function(definition, opening, ctx.newline)
    ctx.report_at(chosen.lineno, chosen.col_offset, "migrated",
                  IN_FUNCTION.format(imp=device_import(name), name=name, function=f"{chosen.name}()"))
    return chosen.lineno


def _definition(tree: Node, function: Function) -> Optional[Node]:
    """The ``funcdef`` of the module-level ``function`` (decorated, async or not)."""
    for statement in tree.children:
        definition = top_function(statement)
        if definition is not None and position(definition)[0] == function.lineno:
            return definition
    return None


def _open_calls(tree: Node, main: Optional[Node], ctx: FileContext) -> list[tuple[Base, str, bool]]:
    """``(statement, name, with .as_default())`` of each module-level (or first-level
    ``__main__``) ``<npu_device>.open(...)`` statement."""
    bound = {name for name, target in ctx.names("npu_device").bindings.items() if target == "npu_device"}
    found = []
    body = block_statements(compound_body(main)) if main is not None else []
    for statement in [*tree.children, *body]:
        match = _OPEN.match(tree_text(statement).strip())
        if match and match.group(1) in bound:
            found.append((statement, match.group(1), bool(match.group(2))))
    return found


def _first(tree: Node, statement: Base) -> bool:
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
    if trains_alone(ctx.original, ctx.path):
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


def _check_options(ctx: FileContext, opened_at: int) -> None:
    """``<npu>.global_options()`` used on a line after the device is opened (at ``opened_at``;
    0: the init this run placed at the top)."""
    names = {name for name, target in ctx.names("npu_device").bindings.items() if target == "npu_device"}
    names.add(device_name(ctx))
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, sorted(names))) + r")\.global_options\(")
    for line_number, line in enumerate(ctx.original.splitlines(), start=1):
        match = pattern.search(line.split("#")[0])
        if match and line_number > opened_at:
            ctx.report_at(line_number, match.start(), "unmigrated", OPTIONS_AFTER_OPEN.format(name=match.group(1)))


def training_module(path: str, text: str) -> Optional[str]:
    """The fact naming the module at ``path`` when its ``text`` trains, else None."""
    if not TRAINING_TEXT.found(text):
        return None
    return TRAINING_FACT + ".".join(module_parts(str(PurePosixPath(path))))


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[frozenset[str]]:
    fact = training_module(path, text)
    return frozenset({fact}) if fact else None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [DeviceInit()]
