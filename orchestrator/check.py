"""``npu-codemod check PATH...``: the CI gate and pre-commit hook. Reads files, needs no git.

It prints ``path:line:col: RULE message`` (1-based column, as editors expect) for every site
that still needs migrating, and exits 1 if there is any: sites that need a person
(``unmigrated``/``error`` findings) and sites that ``npu-codemod run`` would rewrite. A site a
rule reports as ``migrated`` counts only where the rewrite would change its line; sites that
are already in NPU form pass.
"""

from __future__ import annotations

import argparse
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence, TextIO

from npu_codemod.codemods.engine import FileOutcome
from npu_codemod.codemods.excerpts import NEEDS_PERSON, source_text
from npu_codemod.codemods.findings import Finding

from .toolkit import Toolkit

EXIT_CLEAN, EXIT_SITES, EXIT_UNREADABLE = 0, 1, 2
#: Folders never walked into: VCS data, virtualenvs, caches.
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})
#: Marks a site that ``run`` would rewrite (its finding message says what the rewrite does).
FIXABLE = "[fixable by npu-codemod run]"


class CheckInputError(Exception):
    """A PATH argument that does not exist: a usage error."""


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    column: int  # 0-based, as in findings
    rule_id: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column + 1}: {self.rule_id} {self.message}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="Python files or folders")
    parser.add_argument("--rules", default=None, metavar="ID,...", help="check only these rules")
    parser.add_argument("--disable-rule", action="append", default=[], metavar="ID",
                        help="do not check this rule (repeatable)")


def python_files(paths: Sequence[str]) -> list[Path]:
    """The files named, and the ``.py`` files under the folders named (hidden folders skipped)."""
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.py") if p.is_file() and not _skipped(p, path)))
        elif path.exists():
            files.append(path)
        else:
            raise CheckInputError(f"no such file or folder: {name}")
    return files


def _skipped(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts[:-1]
    return any(part.startswith(".") or part in SKIPPED_DIRS for part in parts)


def run_check(paths: Sequence[str], toolkit: Toolkit, out: TextIO, err: TextIO) -> int:
    """Print the sites of ``paths`` that need migrating; the exit code of ``check``."""
    contents, unreadable = _read(python_files(paths), err)
    sites = check_contents(contents, toolkit)
    for site in sites:
        print(site, file=out)
    if unreadable:
        return EXIT_UNREADABLE
    return EXIT_SITES if sites else EXIT_CLEAN


def _read(files: Iterable[Path], err: TextIO) -> tuple[dict[str, bytes], int]:
    contents, unreadable = {}, 0
    for file in files:
        try:
            contents[str(file)] = file.read_bytes()
        except OSError as exc:
            print(f"npu-codemod: {file}: cannot read: {exc.strerror}", file=err)
            unreadable += 1
    return contents, unreadable


def check_contents(contents: dict[str, bytes], toolkit: Toolkit) -> list[Site]:
    """Sites needing migration in files given as ``{path: bytes}``, in path and line order.

    The files count as one repository: repository-wide facts (``uses tf.device``) are
    gathered over all of them, as ``run`` does.
    """
    facts = toolkit.analyze(contents.items()).facts
    sites: list[Site] = []
    for path, data in contents.items():
        outcome = toolkit.engine.process(data, path, facts=facts)
        sites += [Site(f.path, f.line, f.column, f.rule_id,
                       f.message if f.status in NEEDS_PERSON else f"{FIXABLE} {f.message}")
                  for f in sites_to_migrate(outcome, data)]
    return sorted(sites, key=lambda s: (s.path, s.line, s.column, s.rule_id))


def sites_to_migrate(outcome: FileOutcome, data: bytes) -> list[Finding]:
    """Findings that need a person, plus the rewrites ``run`` would make in this file."""
    needed = [f for f in outcome.findings if f.status in NEEDS_PERSON]
    if outcome.new_data is None:
        return needed
    rewrites = [f for f in outcome.findings
                if f.status == "migrated" and f.rule_id in outcome.rule_ids]
    touched = changed_lines(source_text(data), source_text(outcome.new_data))
    on_changed_lines = [f for f in rewrites if f.line in touched]
    # A rewrite away from its reported site (e.g. a close() inserted further down) still counts.
    return needed + (on_changed_lines or rewrites)


def changed_lines(old: str, new: str) -> set[int]:
    """1-based lines of ``old`` that the change from ``old`` to ``new`` replaces, deletes or
    inserts next to."""
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    lines: set[int] = set()
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            lines.update(range(i1 + 1, i2 + 1))
        elif tag == "insert":
            lines.update((i1, i1 + 1))  # the lines around the insertion point
    return lines
