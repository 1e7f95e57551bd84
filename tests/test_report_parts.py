"""The small pieces behind the reports: excerpts, links, chart geometry, history."""

from __future__ import annotations

import json
from pathlib import Path

from npu_codemod.codemods.api_sites import ApiSites
from npu_codemod.codemods.excerpts import MAX_LINE_CHARS, excerpt, with_snippets
from npu_codemod.codemods.findings import Finding
from npu_codemod.orchestrator.results import RepoResult
from npu_codemod.orchestrator.run_record import rule_info
from npu_codemod.plugins.manager import load_plugins
from npu_codemod.reports.charts import BAR_AREA, bar_chart, line_chart
from npu_codemod.reports.history import HISTORY_FILE, append_history, read_history
from npu_codemod.reports.html_report import render_html, rule_guides
from npu_codemod.reports.links import repo_links, web_url
from npu_codemod.reports.sarif_report import sarif_log

from support.reports import Page

TEXT = "".join(f"line {n}\n" for n in range(1, 11))
CATALOG = "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md"
#: A third-party rule as run.json records it: a guide URL that is no web link, no guide section.
ODD_RULE = {"id": "MYL001", "name": "mylib-dropout", "description": "mylib.dropout -> npu_ops",
            "guide_section": "", "guide_url": "javascript:alert(1)"}


def test_excerpt_is_bounded_numbered_and_marks_the_site() -> None:
    assert excerpt(TEXT, 5) == ("  3 | line 3\n  4 | line 4\n> 5 | line 5\n"
                                "  6 | line 6\n  7 | line 7\n")
    assert excerpt(TEXT, 1).splitlines()[0] == "> 1 | line 1"
    assert excerpt(TEXT, 10).splitlines()[-1] == "> 10 | line 10"
    assert excerpt(TEXT, 11) == "" and excerpt(TEXT, 0) == ""
    long = excerpt("x = '" + "a" * 10_000 + "'\n", 1)
    assert len(long) < MAX_LINE_CHARS + 20 and long.endswith("\u2026\n")


def test_only_findings_needing_a_person_get_a_snippet_from_the_original_bytes() -> None:
    made = [Finding("r", "f.py", 2, 0, "NPU002", "n", status, "m")
            for status in ("migrated", "unmigrated", "error")]
    migrated, unmigrated, error = with_snippets(made, b"a = 1\nb = 2\n\xff\n")
    assert migrated.snippet == ""
    assert unmigrated.snippet == error.snippet == "  1 | a = 1\n> 2 | b = 2\n  3 | \ufffd\n"
    assert unmigrated == made[1]  # the snippet is not part of a finding's identity
    assert Finding.from_dict(unmigrated.to_dict()).snippet == unmigrated.snippet
    assert Finding.from_dict({k: v for k, v in made[0].to_dict().items() if k != "snippet"}) == made[0]


def test_web_links_only_for_forge_urls_and_only_http() -> None:
    assert web_url("https://***@github.com/org/model.git") == "https://github.com/org/model"
    assert web_url("git@gitlab.example.com:team/model.git") == "https://gitlab.example.com/team/model"
    assert web_url("ssh://git@github.com/org/model") == "https://github.com/org/model"
    assert web_url("../models/alexnet") is None and web_url("/srv/repos/bert") is None
    links = repo_links(RepoResult("model", "changed", location="git@gitlab.example.com:team/model.git",
                                  branch="npu/x y", commit="abc123", pr_url="javascript:alert(1)"))
    assert links == {"branch": "https://gitlab.example.com/team/model/-/tree/npu/x%20y",
                     "commit": "https://gitlab.example.com/team/model/-/commit/abc123", "pr": None}
    assert repo_links(RepoResult("x", "changed", location="/srv/x", branch="b", commit="c",
                                 pr_url="https://github.com/o/r/pull/7"))["pr"] == "https://github.com/o/r/pull/7"


def test_bar_and_line_chart_geometry() -> None:
    chart = bar_chart({"NPU002": {"migrated": 3, "unmigrated": 1, "error": 0},
                       "NPU004": {"migrated": 0, "unmigrated": 0, "error": 2}})
    assert [(b.width, b.coverage, b.y) for b in chart.bars] == [(BAR_AREA * 0.75, 0.75, 0),
                                                               (0.0, None, 24)]
    trend = line_chart([{"coverage": 0.0, "finished": "t1"}, {"coverage": None},
                        {"coverage": 1.0, "finished": "t2"}])
    assert [(p.label, p.y) for p in trend.points] == [("t1", trend.bottom), ("t2", trend.top)]
    assert trend.path == f"M{trend.left:.1f},{trend.bottom:.1f} L{trend.right:.1f},{trend.top:.1f}"


def run_record(started: str, statuses: tuple[str, ...]) -> dict:
    findings = [Finding("r", "f.py", line, 0, "NPU002", "n", s, "m").to_dict()
                for line, s in enumerate(statuses, start=1)]  # a site per line
    return {"started": started, "finished": started, "command": "run", "rules": [],
            "repos": [{"repo": "r", "status": "changed", "findings": findings}]}


def test_history_appends_once_per_run_and_skips_broken_lines(tmp_path: Path) -> None:
    first, second = run_record("t1", ("migrated", "unmigrated")), run_record("t2", ("migrated",))
    append_history(first, tmp_path)
    with (tmp_path / HISTORY_FILE).open("a") as stream:
        stream.write("{truncated\n")
    append_history(first, tmp_path)
    entries = append_history(second, tmp_path)
    assert [e["coverage"] for e in entries] == [0.5, 1.0]
    assert read_history(tmp_path) == entries
    assert json.loads((tmp_path / HISTORY_FILE).read_text().splitlines()[-1])["started"] == "t2"


def test_page_without_findings_or_history_still_renders() -> None:
    html = "".join(render_html({"started": "t", "finished": "t", "command": "scan", "tool": "x",
                                "rules": [], "repos": []}))
    assert "No findings." in html and "No run with something to migrate yet." in html


def test_result_to_dict_is_the_dataclass_as_json_lists() -> None:
    from dataclasses import asdict

    from npu_codemod.orchestrator.results import ChangeGroup, PullRequestRecord, RepoResult

    finding = Finding("r", "f.py", 1, 0, "NPU002", "n", "migrated", "m", snippet="s")
    sites = (ApiSites("tf.contrib.slim", "deprecated", False, 2), ApiSites("", "supported", False, 6))
    result = RepoResult(repo="r", status="changed", files_changed=("f.py",), notes=("n",),
                        groups=(ChangeGroup("g", ("@o",), ("f.py",)),),
                        pull_requests=(PullRequestRecord("b", reviewers=("x",)),), findings=(finding,),
                        api_sites=sites)
    expected = {**asdict(result), "files_changed": ["f.py"], "notes": ["n"],
                "findings": [asdict(finding)], "api_readiness": 0.75,
                "api_sites": [{k: v for k, v in asdict(row).items() if k != "owned"} for row in sites],
                "sites": {"migrated": 1, "compliant": 0, "left": 0, "not_needed": 0, "errors": 0},
                "verdict": "needs-work", "verdict_reason": "2 API site(s) not ready"}
    assert json.dumps(result.to_dict()) == json.dumps(expected)
    assert finding.to_dict() == asdict(finding)


def test_history_tells_runs_apart_by_id_even_within_one_second(tmp_path):
    same_second = {"started": "2026-01-01T00:00:00+00:00", "finished": "2026-01-01T00:00:00+00:00",
                   "command": "run", "repos": []}
    append_history({**same_second, "id": "a"}, tmp_path)
    append_history({**same_second, "id": "b", "command": "scan"}, tmp_path)
    entries = append_history({**same_second, "id": "a"}, tmp_path)  # `report` re-renders run a
    assert [entry["command"] for entry in entries] == ["run", "scan"]


def guide_run() -> dict:
    npu002 = next(rule for rule in load_plugins().rules() if rule.id == "NPU002")
    finding = Finding("r", "train.py", 3, 4, "NPU002", npu002.name, "unmigrated", "add it")
    return {"started": "t", "finished": "t", "command": "run", "tool": "x",
            "rules": [rule_info(npu002), ODD_RULE],
            "repos": [RepoResult("r", "changed", findings=(finding,)).to_dict()]}


def test_sarif_rules_carry_help_uri_and_the_english_help() -> None:
    odd, npu002 = next(iter(sarif_log(guide_run())["runs"]))["tool"]["driver"]["rules"]
    rule = next(rule for rule in load_plugins().rules() if rule.id == "NPU002")
    assert npu002["helpUri"] == f"{CATALOG}#npu002-dataset-batch-drop-remainder"
    assert npu002["help"]["text"] == (
        f"{rule.description}\n\nRewrites: {rule.rewrites}\n\nReports: {rule.reports}\n\n"
        f"Migration guide section: Data preprocessing (数据预处理)\n\nGuide: {npu002['helpUri']}")
    assert npu002["help"]["markdown"].endswith(
        f"**Migration guide section:** [Data preprocessing (数据预处理)]({npu002['helpUri']})")
    assert npu002["properties"]["guideSectionEn"] == "Data preprocessing"
    assert "helpUri" not in odd and "javascript" not in json.dumps(odd)
    assert odd["help"] == {"text": "mylib.dropout -> npu_ops", "markdown": "mylib.dropout -> npu_ops"}


def test_page_links_a_finding_to_its_rule_guide_only_through_http() -> None:
    run = guide_run()
    assert list(rule_guides(run)) == ["NPU002"]  # MYL001 has no section and no web link
    html = "".join(render_html(run))
    link = f'<a href="{CATALOG}#npu002-dataset-batch-drop-remainder">Data preprocessing (数据预处理)</a>'
    assert f"<p>Guide section: <strong>{link}</strong>: " in html


def test_coverage_over_time_dates_its_runs_and_states_a_single_run() -> None:
    history = [{"coverage": 0.5, "api_readiness": 0.25, "finished": f"2026-01-{day:02}T10:30:00+00:00"}
               for day in range(1, 10)]
    trend = line_chart(history)
    assert [tick.label for tick in trend.ticks] == [
        "2026-01-01 10:30", "2026-01-03 10:30", "2026-01-05 10:30", "2026-01-07 10:30",
        "2026-01-09 10:30"]
    assert [tick.anchor for tick in trend.ticks] == ["start", "middle", "middle", "middle", "end"]
    assert len(trend.readiness_points) == 9 and trend.readiness_path.startswith("M")
    single = {"started": "t", "finished": "t", "command": "run", "tool": "x", "rules": [], "repos": []}
    html = "".join(render_html(single, history[:1]))
    assert ('<p id="history-single">One run so far (2026-01-01 10:30 UTC): rules coverage 50.0%, '
            "API readiness 25.0%.") in html
    assert 'id="history-chart"' not in html


def test_a_record_older_than_the_audit_shows_readiness_as_n_a() -> None:
    finding = Finding("r", "f.py", 1, 0, "NPU002", "n", "migrated", "m")
    repo = RepoResult("r", "changed", findings=(finding,)).to_dict()
    del repo["api_sites"], repo["api_readiness"]
    old = {"started": "t", "finished": "t", "command": "run", "tool": "x", "rules": [],
           "repos": [repo]}
    page = Page("".join(render_html(old)))
    assert page.text_by_id["api-readiness"] == "n/a" and page.text_by_id["coverage"] == "100.0%"
    assert "The audit counted no TensorFlow or Horovod API use with a known status." in page.texts


def test_bars_of_report_only_rules_and_long_labels() -> None:
    chart = bar_chart({"NPU003 predict-last-batch": {"migrated": 0, "unmigrated": 4, "error": 0},
                       "github.com/an-organisation/a-very-long-repository-name": {
                           "migrated": 1, "unmigrated": 1, "error": 0}},
                      report_only={"NPU003 predict-last-batch"})
    only, repo = chart.bars
    assert (only.report_only, only.coverage, only.width) == (True, None, 0.0)
    assert repo.short_label == "github.com/an-\u2026repository-name" and len(repo.short_label) == 30
