"""Issue 13 defect 10: English guide titles, the rule catalog docs/rules.md and the guide URLs.

The catalog is generated from the rules' metadata and their examples run through the engine;
the committed page must be exactly what the generator makes now, so it cannot drift.
"""

from __future__ import annotations

import difflib
import io
import re
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from npu_codemod.codemods.engine import Engine
from npu_codemod.codemods.rule import PROJECT_URL, Rule, guide_note, guide_title
from npu_codemod.orchestrator import rule_catalog
from npu_codemod.orchestrator.cli import main as cli_main
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.orchestrator.rule_catalog import REGENERATE, builtin_catalog, run_example
from npu_codemod.plugins.manager import load_plugins, select_rules

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "docs" / "rules.md"
CATALOG_URL = "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md"
BUILTIN = load_plugins().rules()
CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")

THIRD_PARTY = '''
from npu_codemod.codemods.rule import Rule
from npu_codemod.plugins.hookspecs import hookimpl


class MakeSession(Rule):
    id = "MYL002"
    name = "mylib-make-session"
    description = "Report mylib.make_session(): its tf.Session needs the NPU config."
    guide_section = "3.2"
    guide_url = "https://wiki.example/npu#make-session"
    reports = "Each `mylib.make_session()` call."
    pattern = "power< 'mylib' trailer< '.' 'make_session' > trailer< '(' [any] ')' > >"
    example = """
        import tensorflow as tf
        import mylib

        sess = mylib.make_session()
    """

    def visit(self, node, capture, ctx):
        ctx.report(node, "unmigrated", "pass config=npu_config_proto()")


@hookimpl
def npu_codemod_rules():
    return [MakeSession()]
'''


def test_committed_catalog_is_what_the_rules_generate_now() -> None:
    expected = builtin_catalog()
    committed = CATALOG.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(committed.splitlines(True), expected.splitlines(True),
                                        "docs/rules.md (committed)", "generated"))
    assert committed == expected, f"docs/rules.md is out of date: run {REGENERATE}\n{diff}"


def test_project_url_is_the_homepage_of_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["urls"]["Homepage"] == PROJECT_URL == "https://github.com/npu-codemod/npu-codemod"
    assert project["urls"]["Rule catalog"] == CATALOG_URL


@pytest.mark.parametrize("rule", BUILTIN, ids=lambda rule: rule.id)
def test_builtin_rule_has_an_english_title_and_points_at_its_catalog_entry(rule: Rule) -> None:
    assert CJK.search(rule.guide_section), "guide_section is the Chinese guide's title"
    assert rule.guide_section_en and not CJK.search(rule.guide_section_en)
    anchor = f"{rule.id.lower()}-{rule.name}"
    assert rule.guide_url == f"{CATALOG_URL}#{anchor}"
    headings = re.findall(r"^## (.+)$", CATALOG.read_text(encoding="utf-8"), re.M)
    assert [h for h in headings if github_anchor(h) == anchor] == [f"{rule.id} {rule.name}"]


def github_anchor(heading: str) -> str:
    """The fragment GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("rule", BUILTIN, ids=lambda rule: rule.id)
def test_builtin_example_shows_what_the_rule_rewrites_and_reports(rule: Rule) -> None:
    loaded_rules = load_rules(RuleSelection())
    example = run_example(rule, loaded_rules, loaded_rules.plugins.rules())
    assert example is not None and (rule.rewrites or rule.reports)
    statuses = {finding.status for finding in example.findings}
    assert "error" not in statuses
    assert (example.after is not None) == bool(rule.rewrites) == ("migrated" in statuses)
    assert ("unmigrated" in statuses) == bool(rule.reports)
    if example.after is not None:  # what the page shows is a fixed point that compiles
        compile(example.after, "train.py", "exec", dont_inherit=True)
        engine = Engine(select_rules(loaded_rules.plugins.rules(), {rule.id, *rule.example_with}, set()))
        facts = loaded_rules.repository_facts([("train.py", example.after.encode())]).facts
        assert engine.process(example.after.encode(), "train.py", facts=facts).new_data is None


def test_unmigrated_message_ends_with_the_english_title_and_the_catalog_url() -> None:
    npu003 = next(rule for rule in BUILTIN if rule.id == "NPU003")
    assert guide_note(npu003) == (
        " (guide: Data preprocessing: at inference, pad the last batch to the batch size, "
        f"{CATALOG_URL}#npu003-predict-last-batch)")


@pytest.mark.parametrize("attributes, note", [
    ({"guide_section": "3.1"}, " (guide: 3.1)"),
    ({"guide_section": "数据预处理", "guide_section_en": "Data"}, " (guide: Data)"),
    ({"guide_url": "https://wiki.example/x"}, " (guide: https://wiki.example/x)"),
    ({}, ""),
])
def test_guide_note_of_a_third_party_rule(attributes: dict, note: str) -> None:
    rule = type("Mine", (Rule,), {"id": "MYL009", "name": "mine", "description": "d", **attributes})()
    assert guide_note(rule) == note


def test_guide_title_names_both_titles_once() -> None:
    assert guide_title("Data preprocessing", "数据预处理") == "Data preprocessing (数据预处理)"
    assert guide_title("", "3.1") == guide_title("3.1", "3.1") == "3.1"
    assert guide_title("", "") == ""


def test_rules_format_markdown_adds_third_party_rules_with_their_own_guide(tmp_path: Path) -> None:
    plugin = tmp_path / "mylib_rules.py"
    plugin.write_text(THIRD_PARTY, encoding="utf-8")
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli_main(["rules", "--format", "markdown", "--plugin", str(plugin)]) == 0
    page = out.getvalue()
    assert page.startswith("<!-- Generated by `npu-codemod rules --format markdown` ")
    assert "| [MYL002 mylib-make-session](#myl002-mylib-make-session) | - | report | 3.2 |" in page
    entry = page[page.index("## MYL002 mylib-make-session"):]
    assert entry.startswith(
        "## MYL002 mylib-make-session\n\n"
        "Report mylib.make_session(): its tf.Session needs the NPU config.\n\n"
        "- Guide section: 3.2\n"
        "- Guide: <https://wiki.example/npu#make-session>\n"
        "- Kind: report\n\n"
        "**Rewrites.** Nothing: this rule only reports.\n\n"
        "**Reports.** Each `mylib.make_session()` call.\n\n"
        "**Example.** `npu-codemod run --rules MYL002` on\n\n"
        "```python\nimport tensorflow as tf\nimport mylib\n\nsess = mylib.make_session()\n```\n\n"
        "leaves the file as it is\n\n"
        "and reports:\n\n"
        "- line 4, unmigrated: `pass config=npu_config_proto()`\n")
    for rule in BUILTIN:
        assert f"\n## {rule.id} {rule.name}\n" in page


def test_check_fails_on_a_stale_file_and_passes_once_written(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "rules.md"
    path.write_text("# Rules\n", encoding="utf-8")
    assert rule_catalog.main(["--check", str(path)]) == 1
    assert capsys.readouterr().err == f"{path} is out of date: run {REGENERATE}\n"
    assert rule_catalog.main([str(path)]) == 0
    assert rule_catalog.main(["--check", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == builtin_catalog()


def test_regenerate_command_runs_as_documented(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "npu_codemod.orchestrator.rule_catalog", "--check",
                           str(CATALOG)], capture_output=True, text=True, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
