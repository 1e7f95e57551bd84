"""The engine contract: bytes in, bytes out, lossless; every failure is a finding, never a raise."""

from __future__ import annotations

import codecs
import copy
import sys
from pathlib import Path
from typing import Optional

import pytest
from fissix import pytree
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods.engine import Engine, FileOutcome
from npu_codemod.codemods.rule import Capture, FileContext, Rule
from npu_codemod.plugins.manager import load_plugins

from support.rules import engine, run_rules, sites

CORE = frozenset({"NPU001", "NPU002", "NPU004"})
HEADER = b"from npu_bridge.npu_init import *\n"


def process(data: bytes, rule_ids: Optional[frozenset[str]] = CORE) -> FileOutcome:
    return engine(rule_ids).process(data, "pkg/train.py", repo="org/repo")


# --- Lossless bytes ---------------------------------------------------------------------------


def test_crlf_file_stays_crlf() -> None:
    before = (b"import tensorflow as tf\r\n"
              b"\r\n"
              b"ds = tf.data.TFRecordDataset(files)\r\n"
              b"ds = ds.batch(32)  # batch\r\n"
              b"y = tf.nn.dropout(x, 0.5)\r\n")
    outcome = process(before)
    assert outcome.new_data == (b"from npu_bridge.npu_init import *\r\n"
                                b"import tensorflow as tf\r\n"
                                b"\r\n"
                                b"ds = tf.data.TFRecordDataset(files)\r\n"
                                b"ds = ds.batch(32, drop_remainder=True)  # batch\r\n"
                                b"y = npu_ops.dropout(x, 0.5)\r\n")
    assert sites(outcome.findings) == [
        ("NPU001", 1, 0, "migrated"), ("NPU002", 4, 8, "migrated"), ("NPU004", 5, 4, "migrated")
    ]


def test_latin1_file_with_coding_cookie_stays_latin1() -> None:
    before = ("# -*- coding: latin-1 -*-\n"
              "import tensorflow as tf\n"
              "# r\xe9seau \xe0 \xa7 \xff\n"
              "name = 'caf\xe9'\n"
              "y = tf.nn.dropout(x, 0.5)\n").encode("latin-1")
    outcome = process(before)
    assert outcome.new_data == ("# -*- coding: latin-1 -*-\n"
                                "from npu_bridge.npu_init import *\n"
                                "import tensorflow as tf\n"
                                "# r\xe9seau \xe0 \xa7 \xff\n"
                                "name = 'caf\xe9'\n"
                                "y = npu_ops.dropout(x, 0.5)\n").encode("latin-1")
    assert b"caf\xe9" in outcome.new_data  # one byte, not UTF-8's two
    assert sites(outcome.findings) == [("NPU001", 2, 0, "migrated"), ("NPU004", 5, 4, "migrated")]


def test_utf8_bom_is_kept() -> None:
    before = codecs.BOM_UTF8 + "import tensorflow as tf\n# 数据\ny = tf.nn.dropout(x, 0.5)\n".encode()
    outcome = process(before)
    assert outcome.new_data == codecs.BOM_UTF8 + (
        "from npu_bridge.npu_init import *\nimport tensorflow as tf\n# 数据\n"
        "y = npu_ops.dropout(x, 0.5)\n"
    ).encode()
    assert sites(outcome.findings) == [("NPU001", 1, 0, "migrated"), ("NPU004", 3, 4, "migrated")]


def test_file_without_final_newline_gets_none() -> None:
    outcome = process(b"import tensorflow as tf\ny = tf.nn.dropout(x, 0.5)")
    assert outcome.new_data == HEADER + b"import tensorflow as tf\ny = npu_ops.dropout(x, 0.5)"


def test_crlf_file_without_final_newline() -> None:
    outcome = process(b"import tensorflow as tf\r\ny = tf.nn.dropout(x, 0.5)  # end")
    assert outcome.new_data == (b"from npu_bridge.npu_init import *\r\nimport tensorflow as tf\r\n"
                                b"y = npu_ops.dropout(x, 0.5)  # end")


def test_tab_indentation_is_kept() -> None:
    before = b"import tensorflow as tf\n\ndef net(x):\n\tif x:\n\t\treturn tf.nn.dropout(x, 0.5)\n"
    outcome = process(before)
    assert outcome.new_data == HEADER + (
        b"import tensorflow as tf\n\ndef net(x):\n\tif x:\n\t\treturn npu_ops.dropout(x, 0.5)\n"
    )
    assert ("NPU004", 5, 9, "migrated") in sites(outcome.findings)


def test_untouched_parts_are_byte_identical() -> None:
    body = (b"import tensorflow as tf  # tf\n\n\n"
            b"X = {'a':1,\n     \"b\" : 2}   \n"
            b"s = '''\n  keep  \n'''\n"
            b"y = tf.nn.dropout(x, 0.5)\n")
    outcome = process(body)
    assert outcome.new_data == HEADER + body.replace(b"tf.nn.dropout", b"npu_ops.dropout")


# --- Files no rule may touch ------------------------------------------------------------------


@pytest.mark.parametrize("source", [
    b"import numpy as np\nds = ds.batch(32)\ny = tf.nn.dropout(x, 0.5)\n",
    b"# uses tensorflow elsewhere\nimport torch\nloader.batch(32)\ny = tf.nn.dropout(x, 0.5)\n",
    b"doc = '''\nimport tensorflow as tf\n'''\nds = ds.batch(32)\ny = tf.nn.dropout(x, 0.5)\n",
    b"import tensorflow_datasets as tfds\nds = ds.batch(32)\n",
])
def test_file_without_tensorflow_import_is_untouched(source: bytes) -> None:
    assert process(source, None) == FileOutcome("pkg/train.py")


@pytest.mark.parametrize("first_line", [
    "from __future__ import print_function; import tensorflow as tf",
    "try: import tensorflow as tf",
    "import os, tensorflow as tf",
])
def test_tensorflow_import_in_unusual_places_is_seen(first_line: str) -> None:
    source = first_line + "\nexcept ImportError: pass\n" if first_line.startswith("try") else first_line + "\n"
    new, findings = run_rules(source + "y = tf.nn.dropout(x, 0.5)\n", {"NPU004"})
    assert new is not None and "npu_ops.dropout(x, 0.5)" in new
    assert sites(findings) == [("NPU004", 2 + first_line.startswith("try"), 4, "migrated")]


# --- Files that cannot be read or parsed ------------------------------------------------------


def _only_error(outcome: FileOutcome) -> tuple[int, int, str]:
    assert outcome.new_data is None
    (finding,) = outcome.findings
    assert (finding.repo, finding.path) == ("org/repo", "pkg/train.py")
    assert (finding.rule_id, finding.rule_name, finding.status) == ("NPU000", "source-file", "error")
    return finding.line, finding.column, finding.message


def test_undecodable_bytes_are_one_error_at_their_line() -> None:
    line, _, message = _only_error(process(b"import tensorflow as tf\nx = 1\ns = '\xff\xfe'\n"))
    assert line == 3
    assert message == ("cannot read file: not valid utf-8 text: byte 0xff on line 3 (declare the "
                       "file's encoding with a coding comment or convert it to UTF-8)")


def test_nul_bytes_are_one_error() -> None:
    line, _, message = _only_error(process(b"import tensorflow as tf\n\x00\x01\x02"))
    assert (line, message) == (2, "cannot read file: binary file (NUL byte on line 2)")


def test_unknown_coding_cookie_is_one_error() -> None:
    _, _, message = _only_error(process(b"# -*- coding: klingon -*-\nimport tensorflow as tf\n"))
    assert message.startswith("cannot read file: unknown encoding")


@pytest.mark.parametrize("code, line, column, token", [
    ("match command:\n    case 1:\n        pass\n", 2, 6, "'command'"),
    ("def f(a, /, b):\n    return a\n", 2, 9, "'/'"),
])
def test_syntax_fissix_cannot_parse_is_an_error_with_a_clear_message(
    code: str, line: int, column: int, token: str
) -> None:
    outcome = process(b"import tensorflow as tf\n" + code.encode() + b"y = tf.nn.dropout(x, 0.5)\n")
    assert _only_error(outcome) == (line, column, (
        f"cannot parse line {line}, column {column}: unexpected {token}. The parser (fissix) "
        "reads Python 2 and Python 3 but not some newer syntax: match statements, "
        "positional-only '/' parameters, except*, parenthesised context managers; "
        "migrate this file by hand"
    ))


def test_a_syntax_error_no_python_compiles_is_not_called_newer_syntax() -> None:
    """A weights-conversion script with its placeholder left in (``'<your weights' path>'``):
    no Python reads it, so the message does not blame the parser."""
    code = b"weights = '<your yolov3.weights' path>'\n"
    outcome = process(b"import tensorflow as tf\n" + code + b"y = tf.nn.dropout(x, 0.5)\n")
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert _only_error(outcome) == (2, 33, (
        f"cannot parse line 2, column 33: unexpected 'path'. Python {version} cannot compile "
        "this file either: fix its syntax error, then run npu-codemod again"))


def test_python2_file_is_parsed_with_the_print_statement_grammar() -> None:
    before = (b"import tensorflow as tf\nprint \"x\"\nprint >>sys.stderr, 'y'\nexec 'z = 1'\n"
              b"y = tf.nn.dropout(x, 0.5)\n")
    outcome = process(before)
    assert outcome.new_data == HEADER + before.replace(b"tf.nn.dropout", b"npu_ops.dropout")
    assert sites(outcome.findings) == [("NPU001", 1, 0, "migrated"), ("NPU004", 5, 4, "migrated")]


def test_python3_file_using_exec_and_print_as_names_parses() -> None:
    before = (b"import tensorflow as tf\nrunner.exec = exec\nprint('a', end='')\n"
              b"y = tf.nn.dropout(x, 0.5)\n")
    outcome = process(before)
    assert outcome.new_data == HEADER + before.replace(b"tf.nn.dropout", b"npu_ops.dropout")


# --- Broken rules -----------------------------------------------------------------------------


class Crashing(Rule):
    id = "TST901"
    name = "crashing"
    description = "Raises on every .batch attribute."
    pattern = "trailer< '.' 'batch' >"

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        raise KeyError("boom")


class CrashingAtFinish(Rule):
    id = "TST902"
    name = "crashing-finish"
    description = "Raises once per file."

    def finish(self, tree: pytree.Node, ctx: FileContext) -> None:
        raise RuntimeError("late boom")


class Breaking(Rule):
    id = "TST903"
    name = "breaking"
    description = "Writes code that does not compile and reports it migrated."
    pattern = "trailer< '.' 'batch' >"

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        node.children[1].value = "batch +"
        ctx.report(node, "migrated", "rewrote it")


def with_extra(rule: Rule) -> Engine:
    return Engine([r for r in load_plugins().rules() if r.id in CORE] + [rule])


SCRIPT = (b"import tensorflow as tf\n"
          b"ds = tf.data.TFRecordDataset(files)\n"
          b"ds = ds.batch(32)\n"
          b"memory.batch(8)\n"
          b"y = tf.nn.dropout(x, 0.5)\n")
MIGRATED = (HEADER + b"import tensorflow as tf\n"
            b"ds = tf.data.TFRecordDataset(files)\n"
            b"ds = ds.batch(32, drop_remainder=True)\n"
            b"memory.batch(8)\n"
            b"y = npu_ops.dropout(x, 0.5)\n")


def _line_of(text: str) -> int:
    """The line of this test module that holds ``text`` (where a test rule raises)."""
    return next(n for n, line in enumerate(Path(__file__).read_text().splitlines(), 1)
                if text in line)


@pytest.mark.parametrize("rule, where, detail, raising", [
    (Crashing(), (3, 7), "KeyError: 'boom'", "visit"),
    (CrashingAtFinish(), (1, 0), "RuntimeError: late boom", "finish"),
])
def test_crashing_rule_is_an_error_and_the_others_still_rewrite(
    rule: Rule, where: tuple[int, int], detail: str, raising: str
) -> None:
    outcome = with_extra(rule).process(SCRIPT, "pkg/train.py", repo="org/repo")
    assert outcome.new_data == MIGRATED
    errors = [f for f in outcome.findings if f.status == "error"]
    at = f"test_engine.py:{_line_of(detail.split(': ')[1].strip(chr(39)))} in {raising}"
    assert [(f.rule_id, f.line, f.column, f.message) for f in errors] == [
        (rule.id, *where, f"rule crashed: {detail} (at {at}); the file was migrated without "
                          "this rule")
    ]
    assert errors[0].trace.startswith("Traceback (most recent call last):")
    assert outcome.rule_ids == ("NPU001", "NPU002", "NPU004")


def test_rewrite_that_does_not_compile_restores_the_file() -> None:
    outcome = with_extra(Breaking()).process(SCRIPT, "pkg/train.py", repo="org/repo")
    assert outcome.new_data is None
    assert outcome.rule_ids == ()
    # The sites that need a person are still reported; nothing claims to be migrated.
    assert sites(outcome.findings) == [("NPU000", 1, 0, "error"), ("NPU002", 4, 7, "unmigrated")]
    error = outcome.findings[-1]
    assert error.message.startswith(
        "file left unchanged: the rewrite by NPU001, NPU002, NPU004, TST903 does not compile "
        "(SyntaxError: "
    )
    assert "line" not in error.message  # a line of the rewritten file would mislead


# --- Whole rule set ---------------------------------------------------------------------------

REALISTIC = '''\
#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright 2019 The Authors. Licensed under the Apache License 2.0.
"""Train a small classifier."""
from __future__ import absolute_import
from __future__ import print_function

import os

import tensorflow as tf

FLAGS = tf.app.flags.FLAGS


def input_fn(files, batch_size, is_training):
    dataset = tf.data.TFRecordDataset(files)
    dataset = dataset.map(parse).shuffle(1000).repeat()
    dataset = dataset.batch(batch_size)
    eval_ds = tf.data.TFRecordDataset(files).batch(batch_size, drop_remainder=is_training)
    return dataset.prefetch(1), eval_ds


def model(x, keep_prob, rate):
    h = tf.nn.dropout(x, keep_prob)
    h = tf.nn.dropout(h, rate=rate + 0.1)
    return tf.nn.dropout(h, noise_shape=[1, 8], keep_prob=0.9)
'''


def test_whole_rule_set_is_idempotent_on_a_realistic_script() -> None:
    first, findings = run_rules(REALISTIC)
    assert first is not None
    compile(first, "train.py", "exec", dont_inherit=True)
    second, again = run_rules(first)
    assert second is None
    assert not [f for f in again if f.status == "error"]
    assert first.count("from npu_bridge.npu_init import *") == 1
    assert first.count("drop_remainder=True") == 1
    # Sites migrated in the first run are reported migrated again, at their new places.
    migrated = [(f.rule_id, f.status) for f in findings if f.rule_id in CORE]
    migrated_again = [(f.rule_id, f.status) for f in again if f.rule_id in CORE]
    assert sorted(migrated) == sorted(migrated_again)


def test_positions_are_those_of_the_original_file() -> None:
    _, findings = run_rules(REALISTIC, CORE)
    lines = REALISTIC.splitlines()
    assert sites(findings) == [
        ("NPU001", 8, 0, "migrated"),
        ("NPU002", 18, 22, "migrated"),
        ("NPU002", 19, 45, "unmigrated"),
        ("NPU004", 24, 8, "migrated"),
        ("NPU004", 25, 8, "migrated"),
        ("NPU004", 26, 11, "unmigrated"),
    ]
    for finding in findings:
        if finding.rule_id == "NPU002":
            assert lines[finding.line - 1][finding.column:].startswith("batch(")
        if finding.rule_id == "NPU004":
            assert lines[finding.line - 1][finding.column:].startswith("tf.nn.dropout(")


def test_findings_carry_repo_path_and_rule_name() -> None:
    outcome = process(SCRIPT)
    assert {(f.repo, f.path) for f in outcome.findings} == {("org/repo", "pkg/train.py")}
    names = {f.rule_id: f.rule_name for f in outcome.findings}
    assert names == {"NPU001": "npu-init-import", "NPU002": "dataset-batch-drop-remainder",
                     "NPU004": "nn-dropout"}


def test_engine_is_reusable_across_files() -> None:
    first = process(SCRIPT)
    process(b"import tensorflow as tf\nmatch x:\n    case 1: pass\n")
    assert process(SCRIPT) == first


class Recording(Rule):
    """Records which trailers it is offered, under its id, in a shared list."""

    name = "recording"
    description = "Records its visits."
    seen: list[tuple[str, str]] = []

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        self.seen.append((self.id, str(node).strip()))


def recording(rule_id: str, pattern: str) -> Rule:
    return type(rule_id, (Recording,), {"id": rule_id, "pattern": pattern})()


def test_fixers_looked_up_by_name_and_tried_on_every_node_keep_the_rule_order() -> None:
    Recording.seen.clear()
    rules = [recording("TST911", "trailer< '.' 'batch' >"), recording("TST912", "trailer< '.' NAME >"),
             recording("TST913", "trailer< '.' ('batch' | 'map') >")]
    Engine(rules).process(b"import tensorflow as tf\nds.map(f).batch(2)\n", "t.py")
    assert Recording.seen == [("TST912", ".map"), ("TST913", ".map"), ("TST911", ".batch"),
                              ("TST912", ".batch"), ("TST913", ".batch")]


def test_garbage_collector_is_back_on_after_each_file_even_a_failed_one() -> None:
    import gc

    assert gc.isenabled()
    process(SCRIPT)
    assert gc.isenabled()
    assert process(b"import tensorflow as tf\nmatch x:\n    case 1: pass\n").findings[0].status == "error"
    assert gc.isenabled()
    gc.disable()
    try:
        process(SCRIPT)
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()


# --- Property: whatever the layout, only the rewritten sites change ---------------------------

LINES = st.lists(st.sampled_from([
    "", "# comment ü", "x = 1  ", "z = 'a\\tb'\t# tab",
    "y = tf.nn.dropout(x, 0.5)", "ds = dataset.batch(8)",
]), max_size=8)


@settings(max_examples=60, deadline=None)
@given(lines=LINES, newline=st.sampled_from(["\n", "\r\n"]), final=st.booleans(),
       encoding=st.sampled_from(["utf-8", "latin-1"]))
def test_only_rewritten_sites_change(lines: list[str], newline: str, final: bool, encoding: str) -> None:
    first = "# -*- coding: latin-1 -*-" if encoding == "latin-1" else "#!/usr/bin/env python"
    text = newline.join([first, "import tensorflow as tf", *lines]) + (newline if final else "")
    rewritten = (text.replace("tf.nn.dropout(x, 0.5)", "npu_ops.dropout(x, 0.5)")
                 .replace("dataset.batch(8)", "dataset.batch(8, drop_remainder=True)"))
    outcome = process(text.encode(encoding))
    if rewritten == text:
        assert outcome.new_data is None
    else:
        header = "from npu_bridge.npu_init import *" + newline
        expected = rewritten.replace("import tensorflow", header + "import tensorflow", 1)
        assert outcome.new_data == expected.encode(encoding)


# --- Calls through bare names ------------------------------------------------------------------


class BareCalls(Rule):
    id = "TST904"
    name = "bare-calls"
    description = "Records the bare names called, and every .batch attribute."
    pattern = "( trailer< '.' 'batch' > | power< NAME trailer< '(' [any] ')' > any* > )"

    def __init__(self, tf_names_only: bool) -> None:
        super().__init__()
        self._bare_calls_of_tf_names = tf_names_only
        self.seen: list[str] = []

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        self.seen.append(str(node).strip())


@pytest.mark.parametrize("tf_names_only, seen", [
    (False, ["d(x, 0.5)", "len(x)", "print(y)", ".batch"]),
    (True, ["d(x, 0.5)", ".batch"]),
])
def test_rule_may_be_offered_only_calls_of_names_bound_to_tensorflow(
    tf_names_only: bool, seen: list[str]
) -> None:
    rule = BareCalls(tf_names_only)
    Engine([rule]).process(b"import tensorflow as tf\nfrom tensorflow.nn import dropout as d\n"
                           b"y = d(x, 0.5) + len(x)\nprint(y)\nds.batch(2)\n", "a.py")
    assert rule.seen == seen


def test_builtin_rules_offered_only_tf_calls_rewrite_as_when_offered_every_call() -> None:
    samples = sorted((Path(__file__).parent / "sample_projects").glob("*/*.py"))
    rules = load_plugins().rules()
    assert {rule.id for rule in rules if rule._bare_calls_of_tf_names} >= {"NPU002", "NPU004", "NPU005"}
    every_call = [copy.copy(rule) for rule in load_plugins().rules()]  # the plugins' own stay
    for rule in every_call:
        rule._bare_calls_of_tf_names = False
    for path in samples:
        data = path.read_bytes()
        assert Engine(rules).process(data, path.name) == Engine(every_call).process(data, path.name)


def _ast_modules() -> int:
    import ast
    import gc

    return sum(1 for thing in gc.get_objects() if isinstance(thing, ast.Module))


def test_no_ast_of_a_file_outlives_it() -> None:
    """A file's ``ast`` (read for its unit layout and the audit) goes when the file is done:
    kept, it was what every young collection after the file traced."""
    helpers = "".join(f"\n\ndef helper_{index}(values):\n    total = 0\n    for value in values:\n"
                      f"        total += value * {index}\n    return total\n" for index in range(60))
    source = ("import tensorflow as tf\n" + helpers +
              "\n\ndef model(x, keep_prob):\n    return tf.nn.dropout(x, keep_prob)\n").encode()
    before = _ast_modules()
    outcome = process(source)
    assert outcome.new_data is not None and b"npu_ops.dropout" in outcome.new_data
    assert _ast_modules() == before
