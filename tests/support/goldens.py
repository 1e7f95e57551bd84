"""Whole projects with hand-checked migrated copies: ``corpus/`` and ``sample_projects/``.

Each ``<root>/<name>/`` holds the original files and ``expected/``: every file as it must come
out of one run (identical when no rule touches it) plus ``findings.tsv``, one row per finding.
:func:`regenerate` rewrites ``expected/`` after a deliberate rule change; read every resulting
``git diff`` hunk against the spec before committing it.
"""

from __future__ import annotations

from pathlib import Path

from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules

TESTS = Path(__file__).resolve().parents[1]
CORPUS = TESTS / "corpus"
PROJECTS = TESTS / "sample_projects"


def project_names(root: Path) -> list[str]:
    """The projects under ``root``, sorted."""
    return sorted(p.name for p in root.iterdir() if p.is_dir())


def sources(directory: Path) -> dict[str, bytes]:
    """The ``.py`` files directly in ``directory``: name -> bytes, sorted by name."""
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.py"))}


def migrate(files: dict[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    """One run of every rule, with repository-wide facts, as the pipeline does it."""
    loaded_rules = load_rules(RuleSelection())
    facts = loaded_rules.repository_facts(list(files.items())).facts
    result, findings = {}, []
    for path, data in files.items():
        outcome = loaded_rules.engine.process(data, path, repo="sample", facts=facts)
        result[path] = data if outcome.new_data is None else outcome.new_data
        findings += [f"{f.path}\t{f.line}\t{f.column}\t{f.rule_id}\t{f.status}" for f in outcome.findings]
    return result, sorted(findings, key=lambda row: (row.split("\t")[0], int(row.split("\t")[1]), row))


def regenerate(root: Path) -> None:
    """Rewrite ``expected/`` of every project under ``root`` from one run of the rules."""
    for name in project_names(root):
        project = root / name
        migrated, findings = migrate(sources(project))
        (project / "expected").mkdir(exist_ok=True)
        for path, data in migrated.items():
            (project / "expected" / path).write_bytes(data)
        (project / "expected" / "findings.tsv").write_text("".join(row + "\n" for row in findings))
