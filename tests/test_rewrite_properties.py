"""Property tests over generated TF 1.x training modules: whatever the layout, every rule's
output compiles, a second run is a no-op, and only the rewritten sites change.

A module is composed of blocks of lines (imports under varying aliases, datasets with batch,
dropouts, sessions with and without configs, GELU functions, rewrite options, tf.device,
comments, blank lines, plain code) and laid out with tabs or spaces, LF or CRLF, trailing
whitespace, with or without a final newline, in UTF-8 or latin-1 with a coding cookie. Each
line is marked: a *site* may be rewritten, any other line must come out byte-identical (rules
may only insert lines around it).
"""

from __future__ import annotations

import codecs
import difflib
from functools import lru_cache
from typing import Optional

from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods.source import decode_source
from npu_codemod.orchestrator.loaded_rules import LoadedRules, RuleSelection, load_rules
from npu_codemod.testing import run_rules

Line = tuple[str, bool]  # (text, may be rewritten)

IMPORTS = [  # (import line, the alias the other lines use)
    ("import tensorflow as tf", "tf"),
    ("import tensorflow.compat.v1 as tf", "tf"),
    ("import tensorflow as T", "T"),
    ("import tensorflow", "tensorflow"),
    ("import os, tensorflow as tf", "tf"),
]

#: Blocks a rule acts on. ``{tf}`` alias, ``{i}`` one indent, ``{k}`` a unique number, ``{c}`` a
#: comment with non-ASCII text of the file's encoding.
SITES: list[list[Line]] = [
    [("ds{k} = {tf}.data.TFRecordDataset(files)", False), ("ds{k} = ds{k}.map(parse).batch(32)  {c}", True)],
    [("ds{k} = {tf}.data.Dataset.range(8).batch(4)", True)],
    [("h{k} = {tf}.nn.dropout(h, 0.5)", True)],
    [("h{k} = {tf}.nn.dropout(h, rate=0.1, seed=1)  {c}", True)],
    [("h{k} = {tf}.layers.dropout(h, rate=0.1)", False)],
    [("with {tf}.Session() as sess{k}:", True), ("{i}sess{k}.run(init)", False)],
    [("config{k} = {tf}.ConfigProto(log_device_placement=True)", True),
     ("with {tf}.Session(config=config{k}) as sess{k}:", True), ("{i}sess{k}.run(train_op)", False)],
    [("sess{k} = {tf}.Session()", True), ("sess{k}.run(init)", False), ("print(sess{k}.run(loss))", False)],
    [("def train{k}(steps):", False), ("{i}sess{k} = {tf}.InteractiveSession()", True),
     ("{i}for _ in range(steps):", False), ("{i}{i}sess{k}.run(train_op)  {c}", False),
     ("{i}return steps", False)],
    [("def gelu{k}(x):", False), ('{i}"""GELU."""', False),
     ("{i}return 0.5 * x * (1 + {tf}.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * {tf}.pow(x, 3))))", True)],
    [("opts{k} = {tf}.ConfigProto()", True),
     ("opts{k}.graph_options.rewrite_options.constant_folding = RewriterConfig.OFF", True)],
    [("with {tf}.device('/cpu:0'):", False), ("{i}v{k} = {tf}.Variable(0)", False)],
    [("assert num_written_lines == num_actual_predict_examples", False)],
]

#: Blocks no rule may touch.
INERT: list[list[Line]] = [
    [("", False)],
    [("# {c}", False)],
    [("x{k} = 1", False)],
    [("y{k} = 'a\\tb'\t# tab inside and after", False)],
    [("d{k} = {{'a': 1,", False), ("      'b' : [1, 2,", False), ("             3]}}", False)],
    [("s{k} = '''", False), ("  keep  {c}", False), ("'''", False)],
    [("def f{k}(a):", False), ("{i}if a:", False), ("{i}{i}return a  # deep", False),
     ("{i}return None", False)],
    [("class Model{k}(object):", False), ("{i}def __call__(self, x):", False),
     ("{i}{i}return x * 2", False)],
    [("print('done', {k})", False)],
]

ENCODINGS = {  # codec: (cookie or None, accented comment text)
    "utf-8": (None, "数据 é"),
    "utf-8-cookie": ("# -*- coding: utf-8 -*-", "données"),
    "latin-1": ("# -*- coding: latin-1 -*-", "réseau à ÿ"),
}


@st.composite
def modules(draw) -> tuple[bytes, list[Line], str]:
    """(file bytes, its lines marked, its newline)."""
    encoding = draw(st.sampled_from(sorted(ENCODINGS)))
    cookie, accent = ENCODINGS[encoding]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    indent = draw(st.sampled_from(["    ", "\t", "  "]))
    import_line, alias = draw(st.sampled_from(IMPORTS))
    header: list[str] = []
    if draw(st.booleans()):
        header.append("#!/usr/bin/env python")
    if cookie:
        header.append(cookie)
    if draw(st.booleans()):
        header.append('"""Train a model."""')
    if draw(st.booleans()):
        header.append("from __future__ import print_function")
    header += [import_line, "import numpy as np"]
    lines: list[Line] = [(text, False) for text in header]
    blocks = draw(st.lists(st.one_of(st.sampled_from(SITES), st.sampled_from(INERT)),
                           min_size=1, max_size=10))
    for number, block in enumerate(blocks):
        for text, site in block:
            text = text.format(tf=alias, i=indent, k=number, c=f"# {accent}")
            if not text.endswith(":") and draw(st.integers(0, 4)) == 0:
                text += draw(st.sampled_from([" ", "\t", "  \t"]))  # trailing whitespace
            lines.append((text, site))
    final = draw(st.booleans())
    text = newline.join(text for text, _ in lines) + (newline if final else "")
    codec = "latin-1" if encoding == "latin-1" else "utf-8"
    data = text.encode(codec)
    if encoding == "utf-8" and draw(st.booleans()):
        data = codecs.BOM_UTF8 + data
    return data, lines, newline


@lru_cache(maxsize=None)
def loaded_rules(only: Optional[frozenset[str]]) -> LoadedRules:
    return load_rules(RuleSelection(only=only))


def migrate(kit: LoadedRules, data: bytes):
    facts = kit.repository_facts([("train.py", data)], "repo").facts
    return kit.engine.process(data, "train.py", repo="repo", facts=facts)


def assert_only_sites_changed(data: bytes, lines: list[Line], newline: str, new: bytes) -> None:
    old_text, new_source = decode_source(data).text, decode_source(new)
    new_text = new_source.text
    assert new.startswith(codecs.BOM_UTF8) == data.startswith(codecs.BOM_UTF8)
    assert new_source.encoding == decode_source(data).encoding
    compile(new_text, "train.py", "exec", dont_inherit=True)
    # Every line ends the file's way; the last one as before.
    assert new_text.endswith(newline) == old_text.endswith(newline)
    body = new_text.replace("\r\n", "")
    assert "\n" not in body and "\r" not in body if newline == "\r\n" else "\r" not in new_text
    old_lines, new_lines = old_text.split(newline), new_text.split(newline)
    lines = lines + [("", False)]  # after the final newline
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            touched = lines[i1:i2]
            assert all(site for _, site in touched), f"lines that are not sites changed: {touched}"


def check_module(kit: LoadedRules, module: tuple[bytes, list[Line], str]) -> None:
    data, lines, newline = module
    outcome = migrate(kit, data)
    errors = [f for f in outcome.findings if f.status == "error"]
    assert not errors, errors
    if outcome.new_data is None:
        return
    assert_only_sites_changed(data, lines, newline, outcome.new_data)
    again = migrate(kit, outcome.new_data)
    assert again.new_data is None, again.new_data.decode("latin-1")
    assert not [f for f in again.findings if f.status == "error"]


@settings(max_examples=150)
@given(module=modules())
def test_all_rules_together(module) -> None:
    check_module(loaded_rules(None), module)


RULE_IDS = ["NPU002", "NPU003", "NPU004", "NPU005", "NPU006", "NPU007", "NPU008", "NPU009", "NPU010"]


@settings(max_examples=120)
@given(module=modules(), rule_id=st.sampled_from(RULE_IDS))
def test_each_rule_alone(module, rule_id: str) -> None:
    check_module(loaded_rules(frozenset({rule_id, "NPU001"})), module)


def test_a_rewrite_of_the_last_line_keeps_no_final_newline_in_a_crlf_file() -> None:
    """Found by the property above: a CRLF file with no final newline whose last line NPU006
    rewrites ended in a stray ``\\r`` (the rule writes the file's newline, the engine took
    back only the ``\\n`` the parse needed)."""
    source = ('import tensorflow as tf\r\nimport numpy as np\r\ndef gelu(x):\r\n    """GELU."""\r\n'
              '    return 0.5 * x * (1 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3))))')
    new = run_rules({"NPU006"}, source).new
    assert new.endswith("    return npu_unary_ops.gelu(x)")
    assert "\r" not in new.replace("\r\n", "") and "\n" not in new.replace("\r\n", "")
