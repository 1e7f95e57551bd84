"""Start-up: a command imports only what it uses. The pull-request client (HTTP, TLS, Jinja2
templates), the verification sandbox and ``packaging`` (read for a repository's manifests) are
imported by the runs that need them, not by every ``npu-codemod`` process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.git import make_repo

#: Imported only by a run that opens pull requests, verifies, or reads a TensorFlow pin.
NOT_AT_START = ("jinja2", "ssl", "http.client", "urllib.request", "packaging.requirements",
                "npu_codemod.orchestrator.verify.verify_repository",
                "npu_codemod.orchestrator.verify.compare", "npu_codemod.orchestrator.verify.sandbox")
#: What ``scan`` itself never needs: it opens no pull request and verifies nothing.
NOT_IN_SCAN = ("ssl", "http.client", "urllib.request", "npu_codemod.orchestrator.verify.compare",
               "npu_codemod.orchestrator.verify.sandbox")

_MODULES_AFTER = """
import json, sys
from npu_codemod.orchestrator.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def modules_after(*argv: str) -> set[str]:
    """The modules loaded in the command's own process once ``npu-codemod argv`` is done."""
    out = subprocess.run([sys.executable, "-c", _MODULES_AFTER, *argv], check=True,
                         capture_output=True, text=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_scan_help_imports_no_forge_client_templates_or_verify() -> None:
    loaded = modules_after("scan", "--help")
    assert "npu_codemod.orchestrator.commands.run" in loaded  # the command was reached
    assert sorted(loaded.intersection(NOT_AT_START)) == []


def test_run_help_imports_them_no_more_than_scan() -> None:
    loaded = modules_after("run", "--help")
    assert sorted(loaded.intersection(NOT_AT_START)) == []


def test_a_scan_imports_no_forge_client_nor_verify(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repos = tmp_path / "repos.txt"
    repos.write_text(f"{repo}\n")
    report = tmp_path / "report"
    loaded = modules_after("scan", "--repos", str(repos), "--jobs", "1", "--no-progress",
                           "--report-dir", str(report), "--workspace", str(tmp_path / "ws"))
    assert (report / "report.html").is_file()  # the whole scan ran, its reports written
    assert sorted(loaded.intersection(NOT_IN_SCAN)) == []
    assert "tqdm" not in loaded  # --no-progress: no bar, so no tqdm (and its metadata look-up)


#: What listing the commands never needs: a command's module (its options and handler), the
#: engine, the rules, the reports, git, Jinja2, pluggy or any plugin.
NOT_FOR_THE_COMMAND_LIST = ("npu_codemod.codemods", "npu_codemod.plugins", "npu_codemod.reports",
                            "npu_codemod.orchestrator.batch", "npu_codemod.orchestrator.loaded_rules",
                            "git", "gitdb", "fissix", "bowler", "pluggy", "jinja2", "tqdm")


def _under(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(name for name in modules if any(name == p or name.startswith(p + ".") for p in prefixes))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["-h"], [], ["scna"]])
def test_listing_the_commands_imports_no_command_engine_nor_plugin(argv: list[str]) -> None:
    """``--version``, ``--help``, no command or a misspelt one: about 0.05 CPU s instead of
    0.4 (every plugin, the engine, git and the batch machinery were imported first)."""
    loaded = modules_after(*argv)
    assert "npu_codemod.orchestrator.commands" in loaded
    assert _under(loaded, NOT_FOR_THE_COMMAND_LIST) == []
    commands = {name for name in loaded if name.startswith("npu_codemod.orchestrator.commands.")}
    assert commands == {"npu_codemod.orchestrator.commands.common"}


def test_naming_a_command_adds_every_commands_options_and_the_plugins() -> None:
    """Plugins add options to every command (a clash marks one broken whichever command
    runs), so naming any command loads them all, as before the command list was lazy."""
    loaded = modules_after("rules", "--help")
    assert {"npu_codemod.orchestrator.commands.run", "npu_codemod.orchestrator.commands.prs",
            "npu_codemod.plugins.manager", "npu_codemod.plugins.rules.sess_run.npu001_init_import"} <= loaded


def test_the_command_list_is_the_same_as_with_every_option_added(monkeypatch: pytest.MonkeyPatch) -> None:
    from npu_codemod.orchestrator.commands import build_parser

    monkeypatch.setenv("COLUMNS", "100")
    listed = subprocess.run([sys.executable, "-m", "npu_codemod", "--help"], check=True, capture_output=True,
                            text=True).stdout
    assert listed == build_parser().format_help() and "scan" in listed and "demo" in listed
