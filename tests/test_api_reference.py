"""The rule author's documentation cannot drift from the code.

``docs/api.md`` must be exactly what ``orchestrator/api_reference.py`` generates from
``npu_codemod.api``, every public name must have documentation, and the tutorial's code blocks
(``docs/writing-rules.md``, marked ``<!-- test: FILE -->``) are assembled into a plugin and its
tests, which must pass, load as a plugin, and read the tutorial's settings; each edit example
must turn its diff's old side into its new side.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from npu_codemod import api
from npu_codemod.orchestrator import api_reference
from npu_codemod.orchestrator.api_reference import (
    REGENERATE,
    ApiPage,
    comment_docs,
    groups,
)
from npu_codemod.plugins.manager import PluginSpec, load_plugins
from npu_codemod.testing import run_rules, sites

from support.cli import cli

ROOT = Path(__file__).resolve().parents[1]
API_MD = ROOT / "docs" / "api.md"
TUTORIAL = ROOT / "docs" / "writing-rules.md"
#: A marker and the fenced block right after it (and, for an edit example, the diff after that).
BLOCK = re.compile(r"<!-- test: (?P<target>[^>]+?) -->\n```(?P<lang>\w+)\n(?P<code>.*?)\n```\n"
                   r"(?:\n```diff\n(?P<diff>.*?)\n```\n)?", re.DOTALL)
TUTORIAL_TESTS = 12  # the test functions and parameters of the tutorial's test blocks


def blocks(target: str) -> list[re.Match[str]]:
    found = [match for match in BLOCK.finditer(TUTORIAL.read_text(encoding="utf-8"))
             if match["target"] == target]
    assert found, f"no <!-- test: {target} --> block in {TUTORIAL.name}"
    return found


def source_of(target: str) -> str:
    return "\n\n".join(match["code"] for match in blocks(target)) + "\n"


@pytest.fixture
def tutorial_plugin(tmp_path: Path) -> Path:
    """The tutorial's plugin, its tests and its pyproject.toml, written as the reader writes them."""
    for name in ("acme_rules.py", "test_acme_rules.py", "pyproject.toml"):
        (tmp_path / name).write_text(source_of(name), encoding="utf-8")
    return tmp_path


# --- docs/api.md --------------------------------------------------------------------------


def test_the_committed_api_reference_is_current() -> None:
    assert API_MD.read_text(encoding="utf-8") == ApiPage().page(), f"run {REGENERATE}"


def test_check_fails_on_a_stale_file_and_passes_once_written(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "api.md"
    assert api_reference.main(["--check", str(path)]) == 1  # missing
    path.write_text("# API\n", encoding="utf-8")
    assert api_reference.main(["--check", str(path)]) == 1
    assert capsys.readouterr().err == f"{path} is out of date: run {REGENERATE}\n" * 2
    assert api_reference.main([str(path)]) == 0
    assert api_reference.main(["--check", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == ApiPage().page()


def test_regenerate_command_runs_as_documented(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "npu_codemod.orchestrator.api_reference",
                           "--check", str(API_MD)], capture_output=True, text=True, cwd=tmp_path,
                          check=False)
    assert (done.returncode, done.stderr) == (0, "")


def test_every_public_name_is_documented() -> None:
    assert ApiPage().undocumented() == [], "give these a docstring or a #: comment in api/__init__.py"


def test_the_public_api_is_at_most_40_names_each_documented_on_the_page() -> None:
    text = API_MD.read_text(encoding="utf-8")
    page = ApiPage()
    assert len(api.__all__) <= 40
    assert len(set(api.__all__)) == len(api.__all__)
    for name in api.__all__:
        assert page.doc(name), name
        assert f"\n### `{name}`\n" in text, name


def test_the_tutorial_teaches_every_public_name_without_the_reference() -> None:
    """docs/writing-rules.md names every name of the API, and no other name of npu_codemod's."""
    text = TUTORIAL.read_text(encoding="utf-8")
    assert [name for name in api.__all__ if not re.search(rf"`[^`]*\b{name}\b[^`]*`", text)] == []
    imported = re.findall(r"from (npu_codemod[\w.]*) import", text)
    assert set(imported) <= {"npu_codemod.api", "npu_codemod.testing"}


def test_a_name_without_documentation_is_listed(tmp_path: Path) -> None:
    module = _module(tmp_path / "fake_api.py", '''\
        """A fake API."""
        from textwrap import (
            #: Documented here.
            dedent,
            indent,
        )

        #: A constant with a comment.
        LIMIT = 3
        BARE = 4


        def helper():
            """Has a docstring."""


        __all__ = [
            # First
            "dedent", "indent",
            # Second
            "LIMIT", "BARE", "helper",
        ]
        ''')
    page = ApiPage(module)
    assert page.undocumented() == ["BARE"]  # indent has textwrap's own docstring
    assert (page.doc("dedent"), page.doc("LIMIT"), page.doc("helper")) == (
        "Documented here.", "A constant with a comment.", "Has a docstring.")
    text = page.page()
    assert "- [First](#first): [`dedent`](#dedent), [`indent`](#indent)\n" in text
    assert "## Second\n\n### `LIMIT`\n\n*constant*, defined in `fake_api`\n\n" \
           "```python\nLIMIT = 3\n```\n\nA constant with a comment.\n" in text


def test_groups_and_comments_are_read_from_the_source() -> None:
    source = 'X = 1\n__all__ = [\n    # One\n    "a", "b",\n    # Two\n    "c",\n]\n'
    assert groups(source) == [("One", ["a", "b"]), ("Two", ["c"])]
    assert comment_docs("#: First line,\n#: second line.\nNAME: int = 3\n#: Lost.\n\nx = 1\n") == {
        "NAME": "First line, second line."}
    assert comment_docs("from m import (\n    #: Doc.\n    real as alias,\n)\n") == {"alias": "Doc."}


def test_rule_attributes_and_context_methods_are_on_the_page() -> None:
    text = ApiPage().page()
    assert ("- `calls: ClassVar[tuple[str, ...]] = ()`: Qualified names (any module: "
            "`tensorflow.estimator.RunConfig`) whose *calls*") in text
    assert "#### `FileContext.add_import`\n\n```python\nadd_import(statement: str) -> None\n```" in text
    assert "#### `FileContext.analysis`\n" in text
    for private in ("memo", "per_node", "_analyses", "tokens", "scope", "site_names", "order"):
        assert f"`{private}:" not in text and f"`FileContext.{private}`" not in text, private
    for name in api.__all__:
        assert f"\n### `{name}`\n" in text


def _module(path: Path, source: str) -> ModuleType:
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # inspect.getsource finds the file through it
    spec.loader.exec_module(module)
    return module


# --- docs/writing-rules.md ----------------------------------------------------------------


def test_the_tutorials_plugin_passes_the_tutorials_tests(tutorial_plugin: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tutorial_plugin), str(tutorial_plugin)],
                          cwd=tutorial_plugin, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{TUTORIAL_TESTS} passed" in done.stdout, done.stdout


def test_the_first_rewrite_rule_is_short() -> None:
    """The acceptance of issue 14: RunConfig -> NPURunConfig, with its import, in < 25 lines."""
    first = blocks("acme_rules.py")[0]["code"]
    assert "class RunConfigRule(Rule):" in first and len(first.splitlines()) < 25


def test_the_tutorials_plugin_loads_and_reads_its_settings(tutorial_plugin: Path) -> None:
    plugin = str(tutorial_plugin / "acme_rules.py")
    plugins = load_plugins(PluginSpec(extra=(plugin,)))
    assert plugins.broken == []
    assert [r.id for r in plugins.rules() if r.id.startswith("ACME")] == [
        "ACME001", "ACME002", "ACME003", "ACME004"]
    done = cli("rules", "--format", "json", "--plugin", plugin, "--config", "pyproject.toml",
               cwd=tutorial_plugin)
    assert done.returncode == 0, done.stderr
    row = next(row for row in json.loads(done.stdout) if row["id"] == "ACME001")
    assert row["settings"] == [{
        "name": "precision_mode", "value": "allow_mix_precision", "default": None,
        "type": "one of 'allow_fp32_to_fp16', 'force_fp16', 'must_keep_origin_dtype', "
                "'allow_mix_precision' or None"}]


def test_the_tutorials_error_lines_are_the_real_ones(tutorial_plugin: Path) -> None:
    text = TUTORIAL.read_text(encoding="utf-8")
    (tutorial_plugin / "pyproject.toml").write_text(
        '[tool.npu-codemod.rules.ACME001]\nprecision_mode = "mixed"\n', encoding="utf-8")
    (tutorial_plugin / "train.py").write_text("import tensorflow as tf\n", encoding="utf-8")
    bad_setting = cli("check", "--plugin", "acme_rules.py", "--config", "pyproject.toml",
                      "train.py", cwd=tutorial_plugin)
    typo = cli("check", "--plugin", "acme_rule.py", "train.py", cwd=tutorial_plugin)
    for done in (bad_setting, typo):
        assert done.returncode == 2
        assert done.stderr.strip() in text, done.stderr


EDIT_RULE = "edit rule"


def edit_examples() -> list[tuple[str, str, str]]:
    """(code, before, after) of each edit example: the diff's old and new sides."""
    examples = []
    for match in blocks("edit"):
        assert match["diff"], f"an edit example without its diff:\n{match['code']}"
        before, after = [], []
        for line in match["diff"].split("\n"):
            mark, text = (line[:1], line[1:]) if line else (" ", "")
            if mark in " -":
                before.append(text)
            if mark in " +":
                after.append(text)
        examples.append((match["code"], "\n".join(before) + "\n", "\n".join(after) + "\n"))
    return examples


def edit_ids() -> list[str]:
    """``3-wrap_argument``: each example by the first helper of the API's Edits it calls."""
    edits = dict(groups(ApiPage().source))["Edits"]
    ids = []
    for index, (code, _, _) in enumerate(edit_examples()):
        called = [name for name in re.findall(r"\b(\w+)\(", code) if name in edits]
        ids.append(f"{index}-{called[0] if called else 'edit'}")
    return ids


@pytest.mark.parametrize("index", range(len(edit_examples())), ids=edit_ids())
def test_each_edit_example_makes_its_diff(index: int, tmp_path: Path) -> None:
    """The example's code as the body of ``edit(reference, ctx)``, with every name of the API."""
    code, before, after = edit_examples()[index]
    body = textwrap.indent(code, "    ")
    source = (f"from npu_codemod.api import *\n\n{source_of(EDIT_RULE)}\n\n"
              f"def edit(reference, ctx):\n{body}\n")
    module = _module(tmp_path / f"edit_example_{index}.py", source)
    outcome = run_rules(module.EditExample(), before)
    assert sites(outcome.findings) == []  # the example did not crash
    assert outcome.new == after, code
