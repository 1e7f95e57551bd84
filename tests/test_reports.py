"""Issue 5 acceptance: a real run gives a page matching summary.csv, valid SARIF, escaped names."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from npu_codemod.codemods.findings import FINDING_FIELDS

from support.cli import cli
from support.csvfiles import read_csv
from support.reports import HOSTILE_COMMENT, HOSTILE_NAME, Page, make_run

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
CATALOG = "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("reports"))


def page(report: Path) -> Page:
    return Page((report / "report.html").read_text(encoding="utf-8"))


def test_every_report_file_is_written(report: Path) -> None:
    names = {p.name for p in report.iterdir()}
    assert {"report.html", "findings.csv", "summary.csv", "findings.sarif", "run.json",
            "history.jsonl"} <= names


def test_page_numbers_match_summary_csv(report: Path) -> None:
    summary = read_csv(report / "summary.csv")
    totals = {s: sum(int(row[s]) for row in summary) for s in ("migrated", "unmigrated", "error")}
    assert totals["migrated"] and totals["unmigrated"] and totals["error"]  # all three kinds
    shown = page(report).text_by_id
    for status, count in totals.items():
        assert shown[f"findings-{status}"].strip() == str(count)
    expected = totals["migrated"] / (totals["migrated"] + totals["unmigrated"])
    assert shown["coverage"].strip() == f"{expected * 100:.1f}%"
    assert shown["repos-processed"].strip() == "3"
    assert shown["repos-changed"].strip() == "1"
    assert shown["repos-failed"].strip() == "1"
    assert len(page(report).tags("tr")) >= len(read_csv(report / "findings.csv"))


def test_findings_csv_header_is_unchanged(report: Path) -> None:
    header = (report / "findings.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == "repo,path,line,column,rule_id,rule_name,status,message"
    assert tuple(header.split(",")) == FINDING_FIELDS


def test_failed_repo_is_listed_with_its_reason(report: Path) -> None:
    failed = page(report).text_by_id["failed"]
    assert "not-a-repo" in failed and "not a git repository" in failed


def test_hostile_file_name_and_code_are_text_not_markup(report: Path) -> None:
    html = (report / "report.html").read_text(encoding="utf-8")
    parsed = Page(html)
    assert parsed.tags("img") == []
    assert len(parsed.tags("script")) == 1  # ours only
    text = "".join(parsed.texts)
    assert f"{HOSTILE_NAME}:4" in text
    assert HOSTILE_COMMENT in text  # the snippet shows the comment as code
    assert "&lt;img src=x onerror=alert(1)&gt;.py" in html


def test_unmigrated_findings_carry_snippet_and_guide_section(report: Path) -> None:
    run = json.loads((report / "run.json").read_text(encoding="utf-8"))
    findings = [f for repo in run["repos"] for f in repo["findings"]]
    needs_person = [f for f in findings if f["status"] != "migrated"]
    assert needs_person and all(f["snippet"] for f in needs_person)
    assert all(f["snippet"] == "" for f in findings if f["status"] == "migrated")
    batch = next(f for f in findings if f["path"] == HOSTILE_NAME and f["rule_id"] == "NPU002")
    assert "> 4 | batch = memory.batch(32)\n" in batch["snippet"]
    assert HOSTILE_COMMENT in batch["snippet"]
    npu002 = next(r for r in run["rules"] if r["id"] == "NPU002")
    assert (npu002["guide_section"], npu002["guide_section_en"]) == ("数据预处理", "Data preprocessing")
    shown = page(report)
    text = "".join(shown.texts)
    assert "batch = memory.batch(32)" in text
    assert "Guide section: Data preprocessing (数据预处理)" in text
    assert {"href": npu002["guide_url"]} in shown.tags("a")
    assert npu002["guide_url"] == CATALOG + "#npu002-dataset-batch-drop-remainder"


def test_sarif_validates_against_the_2_1_0_schema(report: Path) -> None:
    sarif = json.loads((report / "findings.sarif").read_text(encoding="utf-8"))
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(sarif)
    assert sarif["version"] == "2.1.0"


def test_sarif_has_one_result_per_site_needing_a_person(report: Path) -> None:
    sarif = json.loads((report / "findings.sarif").read_text(encoding="utf-8"))
    expected = [r for r in read_csv(report / "findings.csv") if r["status"] != "migrated"]
    results = [result for run in sarif["runs"] for result in run["results"]]
    assert len(results) == len(expected)
    assert {r["level"] for r in results} == {"warning", "error"}
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert "%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E.py" in uris
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    npu002 = next(rule for rule in rules if rule["id"] == "NPU002")
    assert "Migration guide section: Data preprocessing (数据预处理)" in npu002["help"]["text"]
    assert npu002["helpUri"] == CATALOG + "#npu002-dataset-batch-drop-remainder"
    failed = next(run for run in sarif["runs"] if run["properties"]["repo"] == "not-a-repo")
    assert failed["invocations"][0]["executionSuccessful"] is False


def test_report_command_rerenders_without_doubling_history(report: Path, tmp_path: Path) -> None:
    before = (report / "history.jsonl").read_text(encoding="utf-8")
    cli("report", "run.json", cwd=report, expect=0)
    assert (report / "history.jsonl").read_text(encoding="utf-8") == before
    cli("report", "run.json", "--report-dir", str(tmp_path / "again"), cwd=report, expect=0)
    again = tmp_path / "again"
    assert (again / "findings.csv").read_bytes() == (report / "findings.csv").read_bytes()
    assert (again / "findings.sarif").read_bytes() == (report / "findings.sarif").read_bytes()
    assert len((again / "history.jsonl").read_text(encoding="utf-8").splitlines()) == 1


@pytest.mark.parametrize("repos, problem", [
    ([3], "repos entry 1: not an object"),
    ([{"repo": "a", "findings": []}], "repos entry 1: no 'status'"),
    ([{"repo": "a", "status": "changed", "findings": [{"path": "x.py"}]}],
     "repos entry 1: a finding without 'repo'"),
])
def test_report_of_a_malformed_record_is_one_line(tmp_path: Path, repos: list, problem: str) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"repos": repos}), encoding="utf-8")
    done = cli("report", "run.json", cwd=tmp_path, expect=2)
    assert done.stderr.strip() == f"npu-codemod: error: run.json: not a run record ({problem})"


def test_each_run_appends_to_history_and_the_page_plots_it(tmp_path: Path) -> None:
    report = make_run(tmp_path)
    cli("scan", "--repos", "repos.txt", "--report-dir", "report", "--workspace", "ws",
        "--no-progress", "--jobs", "1", cwd=tmp_path, expect=1)
    entries = [json.loads(line) for line in (report / "history.jsonl").read_text().splitlines()]
    assert [e["command"] for e in entries] == ["run", "scan"]
    assert entries[0]["findings"]["error"] == 1 and entries[0]["repos"]["failed"] == 1
    dots = [c for c in page(report).tags("circle") if c.get("class") == "dot"]
    assert len(dots) == 2
