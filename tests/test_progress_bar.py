"""The batch's progress bar: with ``--no-progress`` nothing is drawn and tqdm is not needed; a
line written while a bar is shown lands above it, whole."""

from __future__ import annotations

import pytest

from npu_codemod.orchestrator.batch import progress


def test_without_a_bar_a_line_is_printed_as_is(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "_bar_shown", False)
    with progress.ProgressBar(2, enabled=False) as bar:
        bar.started(0, "alpha")
        progress.write_line("npu-codemod: alpha: failed")
        bar.ended(0, "failed")
    assert capsys.readouterr().err == "npu-codemod: alpha: failed\n"


def test_with_a_bar_a_line_is_written_above_it(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "_bar_shown", False)
    with progress.ProgressBar(1, enabled=True) as bar:
        bar.started(0, "alpha")
        progress.write_line("npu-codemod: alpha: failed")
        bar.ended(0, "failed")
    err = capsys.readouterr().err
    assert "npu-codemod: alpha: failed\n" in err
    assert "repos 1/1" in err and "failed 1" in err  # the bar drawn, to its end
