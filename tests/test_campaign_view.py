"""``npu-codemod status`` as the campaign view (real CLI, real git, the fake forge): counts,
per team, the PRs waiting longest, one burndown point per state, ``campaign.html``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support.cli import cli
from support.forge import serve
from support.git import make_repo_with_remote

TOKEN = "tok-0a1b2c3d-campaign-view"
TRAIN = "import tensorflow as tf\n\ndataset = tf.data.TFRecordDataset(files)\ndataset = dataset.batch(32)\n"


def test_status_shows_the_campaign_and_writes_its_page(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NPU_CODEMOD_TOKEN", TOKEN)
    forge, server = serve("github", TOKEN)
    try:
        for name in ("alpha", "beta", "gamma"):
            make_repo_with_remote(tmp_path, name, {"train.py": TRAIN})
        (tmp_path / "repos.txt").write_text("alpha\nbeta\ngamma\ndelta\n")  # delta: no such repo
        run = cli("run", "--repos", "repos.txt", "--push", "--open-prs", "--forge", "github",
                  "--forge-url", forge.url, "--pr-rate", "0", "--jobs", "1", "--no-progress",
                  "--report-dir", "rep", "--reviewer", "@org/ml-infra", cwd=tmp_path)
        assert run.returncode == 1  # delta failed
        alpha, beta, gamma = forge.prs
        alpha.update(state="closed", merged=True)  # merged on the forge
        gamma["reviews"].append({"user": "alice", "state": "APPROVED"})

        first = cli("status", "rep/run.json", cwd=tmp_path)
        again = cli("status", "rep/run.json", cwd=tmp_path)
        beta.update(state="closed")
        later = cli("status", "rep/run.json", cwd=tmp_path)
    finally:
        server.shutdown()

    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert "campaign: 4 repositories: 1 merged, 2 PR open, 0 PR closed, 0 migrated without a PR, " \
        "1 failed, 0 waiting for a later run" in lines
    assert lines[lines.index("team           open  merged  closed") + 1] == "org/ml-infra      2       1       0"
    waiting = lines[lines.index("waiting longest for review:") + 1:]
    assert len(waiting) == 1 and re.fullmatch(
        r"  beta #2: \d+ day\(s\), no approval, checks 1 passed, 1 pending  https://forge.example/org/beta/pull/2",
        waiting[0])
    assert first.stderr == f"campaign page: {tmp_path / 'rep' / 'campaign.html'} (1 point(s) in the burndown)\n"
    assert again.stderr.endswith("(1 point(s) in the burndown)\n")  # the same state: no new point
    assert later.stderr.endswith("(2 point(s) in the burndown)\n")
    points = [json.loads(line) for line in (tmp_path / "rep" / "campaign.jsonl").read_text().splitlines()]
    assert [(p["counts"]["merged"], p["counts"]["open"], p["counts"]["closed"], p["counts"]["failed"])
            for p in points] == [(1, 2, 0, 1), (1, 1, 1, 1)]
    page = (tmp_path / "rep" / "campaign.html").read_text()
    assert '<p id="counts">4 repositories:' in page and "1 PR closed" in page
    assert page.count("<polyline") == 6
    assert "<td>org/ml-infra</td>" in page
    assert "none waiting" in page  # beta is closed now, gamma approved
    assert "<script" not in page
