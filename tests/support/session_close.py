"""NPU010's report on a session it cannot close, for the session-close rule's tests."""

from __future__ import annotations

from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.rule import guide_note
from npu_codemod.plugins.rules.sess_run.npu010_session_close import SessionClose

from support.rules import assert_unchanged

TF = "import tensorflow as tf\n"
CLOSE = "call close() on this session when training ends"
GUIDE = guide_note(SessionClose())


def close_reported(source: str, *expected: tuple[int, int, str]) -> list[Finding]:
    """NPU010 leaves ``TF + source`` as it is and reports each (line, column, why) site: the
    session is not closed, and why the rule could not close it."""
    findings = assert_unchanged(TF + source, {"NPU010"})
    got = [(f.line, f.column, f.status, f.message) for f in findings]
    assert got == [(line, column, "unmigrated", f"{CLOSE} ({why}){GUIDE}")
                   for line, column, why in expected], got
    return findings
