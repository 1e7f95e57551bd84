"""All rules over small realistic TF 1.x projects, compared with hand-checked migrated copies.

Each ``sample_projects/<name>/`` holds the original files and ``expected/``: every file as it
must come out of one run (identical when no rule touches it) plus ``findings.tsv``. A second
run over the expected files must change nothing and report no errors.

After a deliberate rule change: ``python tests/test_sample_projects.py`` rewrites ``expected/``;
read every resulting ``git diff`` hunk against the spec before committing it.
"""

from __future__ import annotations

import sys

import pytest

from support.goldens import PROJECTS, migrate, project_names, regenerate, sources

NAMES = project_names(PROJECTS)


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


if __name__ == "__main__":
    sys.exit(regenerate(PROJECTS))
