"""``--engine selective`` against ``--engine full``: the same bytes and findings, everywhere.

Every golden case already runs in both modes (``npu_codemod.testing.run_rules``). Here: every
Python file of the corpora, sample projects and examples, with the default rules and with every
pack; long real-code-shaped files where most units are skipped; the byte-level corners of
putting skipped units back (CRLF, tabs, encodings, no final newline, form feeds); and the
fallbacks to a whole parse (a placeholder a rule moved, a third-party rule that declares no
scope, syntax ``ast`` reads and fissix does not).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from npu_codemod.api import Capture, FileContext, Node, Rule, hookimpl  # noqa: F401
from npu_codemod.codemods import units
from npu_codemod.codemods.engine import FULL, SELECTIVE, SELECTIVE_MIN_LINES, Engine, parse_module
from npu_codemod.orchestrator.batch.jobs import DEFAULT_BRANCH
from npu_codemod.plugins.manager import load_plugins
from npu_codemod.plugins.packs import default_rules

from support.cli import cli
from support.git import git, make_repo, show

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(path for folder in ("tests/corpus", "tests/sample_projects", "examples")
                 for path in (ROOT / folder).rglob("*.py"))
ALL_RULES = load_plugins().rules()
RULE_SETS = {"default": default_rules(ALL_RULES), "every-pack": ALL_RULES}


def both(rules: list[Rule], data: bytes, path: str = "train.py", facts: frozenset[str] = frozenset(),
         every_file: bool = False):
    selective, full = Engine(rules, SELECTIVE, plan_every_file=every_file), Engine(rules, FULL)
    outcome = selective.process(data, path, repo="repo", facts=facts)
    assert outcome == full.process(data, path, repo="repo", facts=facts)
    return outcome, selective.counts


@pytest.mark.parametrize("rules", sorted(RULE_SETS))
def test_every_corpus_file_gives_the_same_outcome_in_both_modes(rules):
    assert len(SOURCES) > 50
    selective = Engine(RULE_SETS[rules], SELECTIVE, plan_every_file=True)  # short files too
    full = Engine(RULE_SETS[rules], FULL)
    differ = [path for path in SOURCES
              if selective.process(path.read_bytes(), path.name) != full.process(path.read_bytes(), path.name)]
    assert differ == []
    assert selective.counts["whole"] + selective.counts["selective"] > 50
    assert selective.counts["selective"] >= 5 and selective.counts["skipped_lines"] > 100
    assert selective.counts["unparsed"] >= 5  # no rule that reads the tree has a site there
    assert selective.counts["selective"] + selective.counts["unparsed"] >= 15  # some skipped


def _long_model_file(newline: str = "\n") -> str:
    """A real-code-shaped model file: a header, 40 blocks of layers, one dropout site."""
    blocks = []
    for index in range(40):
        layers = "".join(f"        x = tf.layers.conv2d(x, {16 * (k + 1)}, 3, name='c{index}_{k}')\n"
                         f"        x = tf.nn.relu(tf.layers.batch_normalization(x, training=training))\n"
                         for k in range(5))
        blocks.append(f'\n\n@tf.contrib.framework.add_arg_scope\ndef block_{index}(x, training):\n'
                      f'    """Block {index}: a batch of convolutions."""\n'
                      f'    with tf.variable_scope("block_{index}"):\n{layers}    return x  # block {index}\n')
    blocks.insert(20, "\n\ndef classifier(x, keep_prob):\n    x = tf.layers.flatten(x)\n"
                      "    x = tf.nn.dropout(x, keep_prob)\n    return tf.layers.dense(x, 10)\n")
    header = ('"""Model library: blocks and a classifier."""\nimport tensorflow as tf\n\n'
              'FLAGS = tf.app.flags.FLAGS\n')
    text = header + "".join(blocks) + '\n\nif __name__ == "__main__":\n    tf.app.run()\n'
    return text.replace("\n", newline)


@pytest.mark.parametrize("rules", sorted(RULE_SETS))
def test_a_long_file_with_one_site_parses_only_that_site_and_rewrites_as_full(rules):
    outcome, counts = both(RULE_SETS[rules], _long_model_file().encode())
    assert outcome.new_data is not None and b"npu_ops.dropout(x, keep_prob)" in outcome.new_data
    assert counts["selective"] == 1 and counts["skipped_lines"] > 500


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_skipped_units_come_back_byte_for_byte(newline):
    text = _long_model_file(newline)
    start = text.index("def block_3(")
    end = text.index("def block_4(")
    text = text[:start] + text[start:end].replace("    ", "\t") + text[end:]  # a tab-indented unit
    text = f"# -*- coding: latin-1 -*-{newline}" + text.replace("Block 7:", "Bl\xf6ck 7:\f") + "x = 1"  # no final newline
    data = text.encode("latin-1")
    outcome, counts = both(RULE_SETS["default"], data)
    assert counts["selective"] == 1
    new = outcome.new_data.decode("latin-1")
    assert new.replace("npu_ops.dropout(x, keep_prob)", "tf.nn.dropout(x, keep_prob)") \
        .replace(f"from npu_bridge.npu_init import *{newline}", "") == text


def test_units_follow_decorators_semicolons_and_continuations():
    text = textwrap.dedent('''\
        import tensorflow as tf
        a = 1; b = 2


        @decorator(
            "x")
        def f():
            return tf.nn.relu(a) + \\
                b
            # an indented comment after the body


        class C(object): pass
        if __name__ == "__main__":
            f()
        ''')
    layout = units.module_layout(text)
    assert [(unit.first, unit.last, unit.definition, unit.always) for unit in layout.units] == [
        (1, 2, False, True), (5, 9, True, False), (13, 13, True, False), (14, 15, False, True)]
    plan = units.ParsePlan(layout, frozenset({0, 3}))
    parsed = plan.text()
    assert parsed.count("\n") == text.count("\n")
    assert parsed.splitlines()[4:9] == ["(__npu_codemod_unit_1__", "", "", "", ")"]
    assert parsed.splitlines()[9] == "    # an indented comment after the body"


@pytest.mark.parametrize("code", [
    "match x:\n    case 1:\n        pass\n",  # fissix has no match statement: parse it whole
    "def f(a, /, b):\n    pass\n",
    "@buttons[0].clicked.connect\ndef f():\n    pass\n",  # PEP 614 decorators
    "x = a[*b]\n",
    "def f(*args: *Ts):\n    pass\n",
    "for x in *a, *b:\n    pass\n",
    "try:\n    pass\nexcept* ValueError:\n    pass\n",
    "print 'python 2'\n",  # ast cannot read it
    "x = 1\ry = 2\n",  # a lone CR
    "with (open(a), open(b)):\n    pass\n",  # PEP 617: fissix reads one tuple
    "with (open(a) as x,\n      open(b) as y):\n    pass\n",  # fissix cannot read it
    "with \\\n        open(a), open(b):\n    pass\n",
    "async def f():\n    async with (a, b):\n        pass\n",
])
def test_no_layout_where_a_whole_parse_must_decide(code):
    assert units.module_layout("import tensorflow as tf\n" + code) is None


@pytest.mark.parametrize("code", [
    "with tf.name_scope('tower'), tf.device('/cpu:0'):\n    pass\n",
    "with a as (x, y), b:\n    pass\n",
    "with a(), (b):\n    pass\n",  # only a parenthesis right after the keyword may hold them all
    "async def f():\n    async with a, b:\n        pass\n",
])
def test_several_context_managers_without_parentheses_are_laid_out(code):
    assert units.module_layout("import tensorflow as tf\n" + code) is not None
    text = _padded(f"import tensorflow as tf\n\n\ndef tower(x):\n    return tf.nn.dropout(x, 0.5)\n\n\n{code}")
    outcome, counts = both(default_rules(ALL_RULES), text.encode())
    assert counts["selective"] == 1 and counts["skipped_lines"] > SELECTIVE_MIN_LINES
    assert b"npu_ops.dropout(x, 0.5)" in outcome.new_data


def _padded(text: str) -> str:
    """``text`` and a long function no rule acts on: a file long enough to be parsed
    selectively (``SELECTIVE_MIN_LINES``)."""
    body = "".join(f"    total = total + tf.reduce_sum(x * {index})\n" for index in range(SELECTIVE_MIN_LINES))
    return text + f"\n\ndef padding(x):\n    total = 0\n{body}    return total\n"


def test_short_files_are_parsed_whole():
    text = "import tensorflow as tf\n\n\ndef a(x):\n    return tf.nn.dropout(x, 0.5)\n"
    assert both(RULE_SETS["default"], text.encode())[1] == {"whole": 1, "skipped_lines": 0}
    assert both(RULE_SETS["default"], _padded(text).encode())[1]["selective"] == 1


#: A TF utility module: layers and a deprecated contrib API, no site of a rule that reads the
#: tree (no dropout, session, dataset batching...); only the API audit has work in it.
_UTILITIES = textwrap.dedent('''\
    """Layers shared by the models."""
    import tensorflow as tf
    from tensorflow.contrib import slim


    def conv(x, filters):
        """A convolution, normalised."""
        x = slim.conv2d(x, filters, [3, 3])
        return tf.nn.relu(tf.layers.batch_normalization(x))

    ''')


@pytest.mark.parametrize("padded", [False, True])
def test_a_file_only_the_audit_acts_on_is_not_parsed(padded):
    text = _padded(_UTILITIES) if padded else _UTILITIES
    outcome, counts = both(RULE_SETS["default"], text.encode())
    assert counts == {"unparsed": 1}
    assert outcome.new_data is None and outcome.api_sites  # every use counted all the same
    assert [(f.rule_id, f.line, f.column) for f in outcome.findings] == [("NPU100", 8, 8)]  # slim


AUDITS = [rule for rule in ALL_RULES if not rule._reads_tree]


def test_a_file_naming_an_adapter_is_parsed_while_a_rule_reading_the_tree_runs():
    """NPU001 reports an import of the NPU adapter, which is no unit's site: parsed whole."""
    text = "from npu_bridge.npu_init import *\n" + _UTILITIES
    outcome, counts = both(RULE_SETS["default"], text.encode())
    assert counts["unparsed"] == 0
    assert "NPU001" in [f.rule_id for f in outcome.findings]


@pytest.mark.parametrize("adapter", ["import horovod.tensorflow as hvd\n", "from npu_bridge.npu_init import *\n"])
def test_with_only_the_audits_a_file_naming_an_adapter_is_not_parsed(adapter):
    """No rule that reads the tree is active: the same rules run parsed or not."""
    text = adapter + _UTILITIES + "\n\ndef size():\n    return hvd.size()\n"
    outcome, counts = both(AUDITS, text.encode())
    assert counts == {"unparsed": 1}
    assert outcome.api_sites and outcome.findings


@pytest.mark.parametrize("text, no_site", [
    ('"""Batch the records."""\nx = 1  # batch\ny = "a batch"\n', True),  # comments and strings
    ("batch_size = 2\ndef batches(d):\n    return d\n", True),  # other words
    ("y = d.batch(3)\n", False), ("x = '#'; y.batch(2)\n", False), ("from a import batch as b\n", False),
])
def test_the_first_look_for_sites_reads_code_only(text, no_site):
    need = units.RuleNeed(units.SITE, frozenset({".batch"}))
    assert units.may_have_no_site(text, [need]) is no_site
    assert not units.may_have_no_site(text, [units.RuleNeed(units.MODULE, frozenset())])


def test_an_assert_of_an_equality_is_the_only_assert_npu003_parses():
    checked = _UTILITIES + "\n\ndef check(x, n):\n    assert x.shape.ndims > n, 'rank'\n"
    outcome, counts = both(RULE_SETS["default"], _padded(checked).encode())
    assert counts["unparsed"] == 1
    counted = checked + "\n\ndef predict(results, examples):\n    assert len(results) == len(examples)\n"
    outcome, counts = both(RULE_SETS["default"], _padded(counted).encode())
    assert counts["selective"] == 1 and counts["skipped_lines"] > SELECTIVE_MIN_LINES  # all but that one
    assert ("NPU003", 18, 4) in [(f.rule_id, f.line, f.column) for f in outcome.findings]


def test_an_alias_of_a_site_name_makes_its_unit_a_site():
    text = _padded("from tensorflow.nn import dropout as drop\nimport tensorflow as tf\nnn = tf.nn\n\n"
                   "def a(x):\n    return drop(x, 0.5)\n\n\ndef b(x):\n    return nn.dropout(x, 0.5)\n\n\n"
                   "def c(x):\n    return tf.nn.relu(x)\n")
    layout = units.module_layout(text)
    plan = units.plan_parse(layout, [units.RuleNeed(units.SITE, frozenset({"dropout"}))])
    assert sorted(plan.chosen) == [0, 1, 2]  # the imports, a and b (nn is bound: always parsed)
    outcome, counts = both(RULE_SETS["default"], text.encode())
    assert outcome.new_data.count(b"npu_ops.dropout") == 2 and counts["selective"] == 1


def test_a_linked_rule_gets_the_functions_its_site_uses_and_their_callers():
    text = textwrap.dedent('''\
        import tensorflow as tf


        def parse(record):
            return tf.io.parse_single_example(record, FEATURES)


        def input_fn(files):
            dataset = tf.data.TFRecordDataset(files).map(parse)
            return dataset.batch(32)


        def train(files):
            return input_fn(files)


        def unrelated():
            return 3
        ''')
    layout = units.module_layout(text)
    plan = units.plan_parse(layout, [units.RuleNeed(units.LINKED, frozenset({"batch"}))])
    assert [layout.units[index].defines for index in sorted(plan.chosen)][1:] == [
        {"parse"}, {"input_fn"}, {"train"}]
    outcome, counts = both(RULE_SETS["default"], _padded(text).encode())
    assert b"batch(32, drop_remainder=True)" in outcome.new_data and counts["selective"] == 1


class _RenamesDropoutLast(Rule):
    """Spells each ``tf.nn.dropout(...)`` as ``npu.nn.dropout(...)``, in ``finish`` and by
    assigning the leaf's value (which fissix does not record as a change)."""

    id = "TST904"
    name = "renames-dropout-last"
    description = "test rule"
    _scope = "site"
    calls = ("tensorflow.nn.dropout",)

    def start(self, tree: Node, ctx: FileContext) -> None:
        self.heads = []

    def visit_reference(self, reference, ctx: FileContext) -> None:
        self.heads.append(reference.node.children[0])
        ctx.report(reference, "migrated", "renamed it")

    def finish(self, tree: Node, ctx: FileContext) -> None:
        for head in self.heads:
            head.value = "npu"


#: Five definitions after the import (always parsed): the second and fourth are sites.
_FIVE = textwrap.dedent('''\
    """Five definitions."""
    import tensorflow as tf


    # the first, skipped
    def first(x):
        return tf.nn.relu(x)  # first


    def second(x, keep):
        return tf.nn.dropout(x, keep)
    # between the second and the third


    class Third(object):
        """Skipped."""

        def call(self, x):
            return tf.nn.relu(x)


    @tf.function
    def fourth(x):
        return tf.nn.dropout(x,
                             0.5)


    def fifth(x):
        return tf.nn.relu(x)  # fifth, skipped
    ''')


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_rewritten_and_skipped_units_are_joined_in_the_file_order(newline):
    text = _FIVE.replace("\n", newline)
    layout = units.module_layout(text)
    plan = units.plan_parse(layout, [units.RuleNeed(units.SITE, frozenset({"dropout"}))])
    assert sorted(plan.chosen) == [0, 2, 4]  # the docstring and import, second and fourth
    tree = parse_module(plan.text())
    assert plan.restore(tree) == [2, 4, 6]  # the top-level statements the placeholders were
    assert str(tree) == text
    outcome, counts = both([_RenamesDropoutLast()], text.encode(), every_file=True)
    assert counts["selective"] == 1 and counts["skipped_lines"] == 9  # first, Third, fifth
    assert outcome.new_data.decode() == text.replace("tf.nn.dropout", "npu.nn.dropout")


class _RemovesAStatement(Rule):
    """Removes the module's fourth statement (a ``def`` no rule needs: a placeholder)."""

    id = "TST901"
    name = "removes-a-statement"
    description = "test rule"
    _scope = "site"
    _site_names = ("dropout",)

    def finish(self, tree: Node, ctx: FileContext) -> None:
        tree.children[3].remove()


class _Unscoped(Rule):
    """A third-party rule that declares no scope: the engine must parse every file whole."""

    id = "TST902"
    name = "unscoped"
    description = "test rule"

    def finish(self, tree: Node, ctx: FileContext) -> None:
        for statement in tree.children:
            if "__npu_codemod_unit" in str(statement):
                ctx.report(statement, "unmigrated", "saw a placeholder")


def test_a_placeholder_a_rule_moved_makes_the_file_be_redone_whole():
    data = _long_model_file().encode()
    outcome, counts = both([_RemovesAStatement()], data)
    assert counts["selective"] == 1 and counts["whole"] == 1  # tried, then redone whole
    assert b"def block_0(" in data and b"def block_0(" not in outcome.new_data


def test_a_rule_without_a_scope_sees_the_whole_file():
    outcome, counts = both([_Unscoped(), *RULE_SETS["default"]], _long_model_file().encode())
    assert counts["selective"] == 0
    assert not [f for f in outcome.findings if f.rule_id == "TST902"]


class _BreaksDropout(Rule):
    """Turns each ``tf.nn.dropout`` call into code that does not compile."""

    id = "TST903"
    name = "breaks-dropout"
    description = "test rule"
    _scope = "site"
    calls = ("tensorflow.nn.dropout",)

    def visit_reference(self, reference, ctx: FileContext) -> None:
        reference.node.children[0].value = "return"
        ctx.report(reference, "migrated", "broke it")


def test_a_rewrite_that_does_not_compile_is_refused_alike_in_both_modes():
    data = _long_model_file().encode()
    outcome, counts = both([_BreaksDropout()], data)
    assert counts["selective"] == 1 and outcome.new_data is None
    assert [(f.rule_id, f.status) for f in outcome.findings] == [("NPU000", "error")]
    assert "does not compile (SyntaxError" in outcome.findings[0].message


def test_run_on_a_git_repository_commits_the_same_tree_with_either_engine(tmp_path):
    """The real command line: ``run --engine selective`` and ``--engine full`` on copies of one
    repository (a long model file, a short script, a Python 2 file) commit the same tree."""
    files = {"models/net.py": _long_model_file(), "train.py": _padded(
        "import tensorflow as tf\n\n\ndef main():\n    return tf.nn.dropout(tf.ones([2]), 0.5)\n"),
        "legacy.py": "import tensorflow as tf\nprint 'old'\nx = tf.nn.dropout(y, 0.5)\n"}
    trees = {}
    for engine in ("selective", "full"):
        make_repo(tmp_path / engine / "repo", files)
        (tmp_path / engine / "repos.txt").write_text("repo\n")
        cli("run", "--repos", "repos.txt", "--engine", engine, "--no-progress", "--no-cache",
            "--report-dir", "report", "--workspace", "ws", cwd=tmp_path / engine, expect=0)
        trees[engine] = git(tmp_path / engine / "repo", "rev-parse", f"{DEFAULT_BRANCH}^{{tree}}")
        assert git(tmp_path / engine / "repo", "status", "--porcelain") == ""
    assert trees["selective"] == trees["full"]
    assert b"npu_ops.dropout" in show(tmp_path / "selective" / "repo", DEFAULT_BRANCH, "models/net.py")


def test_an_unknown_engine_is_one_line_and_exit_2(tmp_path):
    done = cli("run", "--repos", "repos.txt", "--engine", "fast", cwd=tmp_path, expect=2)
    assert "invalid choice: 'fast'" in done.stderr and "Traceback" not in done.stderr


def test_a_file_of_sites_is_parsed_whole_without_planning():
    """Every function a site: a first look (``units.may_skip``) says a plan would spare
    nothing, so no ``ast`` pass is spent on one."""
    text = "import tensorflow as tf\n" + "".join(
        f"\n\ndef layer_{index}(x):\n" + "    x = tf.layers.dense(x, 8)\n" * 8
        + "    return tf.nn.dropout(x, 0.5)\n" for index in range(30))
    needs = [units.RuleNeed(units.SITE, frozenset({"dropout"}))]
    assert not units.may_skip(text, needs)
    assert units.may_skip(_long_model_file(), needs)
    outcome, counts = both(RULE_SETS["default"], text.encode())
    assert counts == {"whole": 1, "skipped_lines": 0} and outcome.new_data.count(b"npu_ops.dropout") == 30


class _FailsOnFacts(Rule):
    """A site rule whose site names fail for some repository's facts (a plugin's bug)."""

    id = "TST904"
    name = "fails-on-facts"
    description = "test rule"
    _scope = "site"
    calls = ("tensorflow.nn.dropout",)

    def _site_names_for(self, facts):
        if facts:
            raise KeyError("no such class")
        return super()._site_names_for(facts)

    def visit_reference(self, reference, ctx: FileContext) -> None:
        ctx.report(reference, "unmigrated", "a dropout")


def test_site_names_that_raise_read_the_whole_file_alike_in_both_modes():
    data = _long_model_file().encode()
    outcome, counts = both([_FailsOnFacts()], data, facts=frozenset({"class:m.C"}))
    assert counts["selective"] == 0 and counts["whole"] == 1
    assert [(f.rule_id, f.status) for f in outcome.findings] == [("TST904", "unmigrated")]
