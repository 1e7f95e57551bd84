"""Start-up: a command imports only what it uses. The pull-request client (HTTP, TLS, Jinja2
templates), the verification sandbox and ``packaging`` (read for a repository's manifests) are
imported by the runs that need them, not by every ``npu-codemod`` process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
