"""The batch's progress bar: with ``--no-progress`` nothing is drawn and tqdm is not needed; a
line written while a bar is shown lands above it, whole."""

from __future__ import annotations

import pytest

from npu_codemod.orchestrator.batch import progress


@pytest.mark.parametrize("enabled", [False, True])
def test_a_line_is_written_whole_with_or_without_a_bar(enabled: bool, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "_bar_shown", False)
    with progress.ProgressBar(1, enabled=enabled) as bar:
        bar.started(0, "alpha")
        progress.write_line("npu-codemod: alpha: failed")
        bar.ended(0, "failed")
    err = capsys.readouterr().err
    if enabled:  # the line above the bar, the bar drawn to its end
        assert "npu-codemod: alpha: failed\n" in err and "repos 1/1" in err and "failed 1" in err
    else:  # nothing but the line
        assert err == "npu-codemod: alpha: failed\n"
