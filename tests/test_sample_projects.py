"""All rules over small realistic TF 1.x projects, compared with hand-checked migrated copies.

Each ``sample_projects/<name>/`` holds the original files and ``expected/``: every file as it
must come out of one run (identical when no rule touches it) plus ``findings.tsv``. A second
run over the expected files must change nothing and report no errors.

After a deliberate rule change: ``python tests/test_sample_projects.py`` rewrites ``expected/``;
read every resulting ``git diff`` hunk against the spec before committing it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from npu_codemod.orchestrator.toolkit import RuleSelection, build_toolkit

PROJECTS = Path(__file__).parent / "sample_projects"
NAMES = sorted(p.name for p in PROJECTS.iterdir() if p.is_dir())


def sources(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.py"))}


def migrate(files: dict[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    """One run of every rule, with repository-wide facts, as the pipeline does it."""
    toolkit = build_toolkit(RuleSelection())
    facts = toolkit.analyze(list(files.items())).facts
    result, findings = {}, []
    for path, data in files.items():
        outcome = toolkit.engine.process(data, path, repo="sample", facts=facts)
        result[path] = data if outcome.new_data is None else outcome.new_data
        findings += [f"{f.path}\t{f.line}\t{f.column}\t{f.rule_id}\t{f.status}" for f in outcome.findings]
    return result, sorted(findings, key=lambda row: (row.split("\t")[0], int(row.split("\t")[1]), row))


@pytest.mark.parametrize("name", NAMES)
def test_project_migrates_to_expected(name: str) -> None:
    project = PROJECTS / name
    migrated, findings = migrate(sources(project))
    expected = sources(project / "expected")
    assert sorted(migrated) == sorted(expected)
    for path, data in migrated.items():
        assert data.decode("utf-8") == expected[path].decode("utf-8"), f"{name}/{path}"
    assert findings == (project / "expected" / "findings.tsv").read_text().splitlines()
    assert not [row for row in findings if row.endswith("\terror")]


@pytest.mark.parametrize("name", NAMES)
def test_expected_output_compiles_and_is_a_fixed_point(name: str) -> None:
    expected = sources(PROJECTS / name / "expected")
    for path, data in expected.items():
        compile(data, path, "exec", dont_inherit=True)
    again, findings = migrate(expected)
    assert again == expected
    assert not [row for row in findings if row.endswith("\terror")]


def regenerate(root: Path = PROJECTS) -> None:
    for name in sorted(p.name for p in root.iterdir() if p.is_dir()):
        project = root / name
        migrated, findings = migrate(sources(project))
        (project / "expected").mkdir(exist_ok=True)
        for path, data in migrated.items():
            (project / "expected" / path).write_bytes(data)
        (project / "expected" / "findings.tsv").write_text("".join(row + "\n" for row in findings))


if __name__ == "__main__":
    sys.exit(regenerate())
