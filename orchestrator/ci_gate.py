"""``npu-codemod check PATH...``: the CI gate and pre-commit hook. Reads files, needs no git
(a ``.git`` only marks the repository's top: ``check_paths``).

It prints ``path:line:col: RULE message`` (1-based column, as editors expect) for every site
that still needs migrating, and exits 1 if there is any: sites that need a person
(``unmigrated``/``error`` findings, with their instruction) and every site that ``npu-codemod
run`` would rewrite, marked ``[fixable]`` and said in the imperative (``[fixable] add
drop_remainder=True ...``): exactly the ``migrated`` findings whose rule rewrote the site (see
:func:`findings.rewrite_instruction`). Sites already in NPU form pass.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence, TextIO

from npu_codemod.codemods.engine import FILE_RULE, FILE_RULE_ID, FileOutcome
from npu_codemod.codemods.excerpts import NEEDS_PERSON
from npu_codemod.codemods.file_kinds import NOTEBOOK, SYMLINK, is_test_file, notebook_uses_tensorflow
from npu_codemod.codemods.findings import rewrite_instruction
from npu_codemod.codemods.source import source_text, user_code_warnings_off
from npu_codemod.codemods.standalone_keras import keras_findings
from npu_codemod.codemods.star_imports import star_findings
from npu_codemod.codemods.tf_runtime import is_manifest
from npu_codemod.codemods.tf_scopes import code_folders, decided_facts
from npu_codemod.codemods.tflearn_sessions import tflearn_findings
from npu_codemod.orchestrator.check_paths import CheckPaths
from npu_codemod.orchestrator.loaded_rules import LoadedRules

EXIT_CLEAN, EXIT_SITES, EXIT_UNREADABLE = 0, 1, 2
#: Folders never walked into: VCS data, virtualenvs, caches.
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})
#: Marks a site that ``run`` would rewrite (followed by what the rewrite does).
FIXABLE = "[fixable]"


class CheckInputError(Exception):
    """A PATH argument that does not exist: a usage error."""


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    column: int  # 0-based, as in findings
    rule_id: str
    message: str
    trace: str = field(default="", compare=False)  # of a rule that crashed here

    def __str__(self) -> str:
        return f"{shown_path(self.path)}:{self.line}:{self.column + 1}: {self.rule_id} {self.message}"


_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def shown_path(path: str) -> str:
    """``path`` on one line: as it is, or (holding a control character, or bytes that are not
    UTF-8) in double quotes with C escapes, as git quotes it; a file name never forges a line
    of CI output."""
    if path.isprintable() or not any(ch < " " or ch == "\x7f" or "\udc80" <= ch <= "\udcff" for ch in path):
        return path
    return '"' + "".join(_escaped(ch) for ch in path) + '"'


def _escaped(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if ch < " " or ch == "\x7f":
        return f"\\{ord(ch):03o}"
    if "\udc80" <= ch <= "\udcff":  # an undecodable byte of the name (surrogateescape)
        return f"\\{ord(ch) - 0xdc00:03o}"
    return ch


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="Python files or folders")
    parser.add_argument("--rules", default=None, metavar="ID_OR_PACK,...",
                        help="check only these rules or packs (default: every pack but distributed)")
    parser.add_argument("--disable-rule", action="append", default=[], metavar="ID_OR_PACK",
                        help="do not check this rule or pack (repeatable)")


def python_files(paths: Sequence[str], include_tests: bool = False) -> tuple[list[Path], list[Path]]:
    """The files named, and the ``.py`` files under the folders named (hidden folders
    skipped), less test files unless ``include_tests``: (files to read, symlinks). A symlink
    is never followed, as ``run`` never follows one."""
    files: list[Path] = []
    links: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir() and not path.is_symlink():
            found = [p for p in _walked(path) if p.suffix == ".py"]
            found = [p for p in found if include_tests or not is_test_file(_repository_path(p, path))]
            links += [p for p in found if p.is_symlink()]
            files += [p for p in found if not p.is_symlink() and p.is_file()]
        elif path.is_symlink() or path.exists():
            if path.suffix == ".ipynb":
                continue  # a notebook: see notebook_sites
            if include_tests or not is_test_file(_repository_path(path, None)):
                (links if path.is_symlink() else files).append(path)
        else:
            raise CheckInputError(f"no such file or folder: {name}")
    return files, links


def _repository_path(path: Path, root: Optional[Path]) -> str:
    """``path`` as the test-file convention reads it: relative to the current folder (check
    runs at the top of the repository it checks); outside it, relative to the folder named
    (``root``), or its name alone."""
    relative = os.path.relpath(os.path.abspath(path))
    if not relative.startswith(os.pardir):
        return relative
    return str(path.relative_to(root)) if root is not None else path.name


def _walked(root: Path) -> list[Path]:
    """Every file and symlink under the folder ``root``, sorted, never walking into a hidden
    folder or one of :data:`SKIPPED_DIRS` (a pre-commit hook must not read ``.git`` or
    ``node_modules`` at every commit) nor through a symlinked folder."""
    found = []
    for folder, folders, files in os.walk(root):
        here = Path(folder)
        found += [here / name for name in folders if (here / name).is_symlink()]
        folders[:] = [name for name in folders if not name.startswith(".") and name not in SKIPPED_DIRS
                      and not (here / name).is_symlink()]
        found += [here / name for name in files]
    return sorted(found)


def run_check(paths: Sequence[str], loaded_rules: LoadedRules, out: TextIO, err: TextIO,
              debug: bool = False, include_tests: bool = False,
              tensorflow: Optional[str] = None) -> int:
    """Print the sites of ``paths`` that need migrating; the exit code of ``check``. With
    ``debug``, the traceback of each rule that crashed goes to ``err``; test files are
    left out unless ``include_tests``; ``tensorflow`` is the TensorFlow major version the
    code runs (None: the repository's pins, else the code: ``tf_runtime``). The files are
    keyed from the repository's top and printed as named: ``check_paths``."""
    files, links = python_files(paths, include_tests)
    contents, unreadable = _read(files, err)
    where = CheckPaths.of(paths)
    manifests = {where.key(str(path)): text for path, text in _manifests(where.pinned_folders())}
    own = _own_pyproject(where.settings_folders())
    if own is not None:  # the repository's own settings (check runs on a folder of it, or on it)
        manifests.setdefault("pyproject.toml", own)
    where = where.reading([*contents, *map(str, links)], manifests)
    with user_code_warnings_off():
        sites = check_contents({where.key(path): data for path, data in contents.items()}, loaded_rules,
                               [where.key(str(link)) for link in links], manifests, tensorflow, where.tops())
    sites = [replace(site, path=where.shown(site.path), message=where.shown_text(site.message)) for site in sites]
    sites = sorted(sites + notebook_sites(paths, include_tests), key=lambda s: (s.path, s.line, s.column, s.rule_id))
    for site in sites:
        print(site, file=out)
        if debug and site.trace:
            print(f"{shown_path(site.path)}:{site.line}: {site.rule_id} crashed:\n{site.trace}", file=err)
    if unreadable:
        return EXIT_UNREADABLE
    return EXIT_SITES if sites else EXIT_CLEAN


def notebook_sites(paths: Sequence[str], include_tests: bool = False) -> list[Site]:
    """One site per ``.ipynb`` notebook named or under the folders named that uses TensorFlow:
    notebooks are not migrated, as in ``run``. Unreadable notebooks are left out."""
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir() and not path.is_symlink():
            found += [p for p in _walked(path) if p.suffix == ".ipynb" and not p.is_symlink()
                      and (include_tests or not is_test_file(_repository_path(p, path)))]
        elif path.suffix == ".ipynb" and path.is_file() and not path.is_symlink():
            found.append(path)
    sites = []
    for path in found:
        try:
            uses_tf = notebook_uses_tensorflow(path.read_bytes())
        except OSError:
            continue
        if uses_tf:
            sites.append(Site(str(path), 1, 0, FILE_RULE_ID, NOTEBOOK))
    return sites


def _read(files: Iterable[Path], err: TextIO) -> tuple[dict[str, bytes], int]:
    contents, unreadable = {}, 0
    for file in files:
        try:
            contents[str(file)] = file.read_bytes()
        except OSError as exc:
            print(f"npu-codemod: {shown_path(str(file))}: cannot read: {exc.strerror}", file=err)
            unreadable += 1
    return contents, unreadable


def _own_pyproject(paths: Sequence[str]) -> Optional[str]:
    """The ``pyproject.toml`` at the top of the first folder named that has one: the
    repository's own ``[tool.npu-codemod]`` settings (``tensorflow``, ``entry``)."""
    for name in paths:
        found = Path(name) / "pyproject.toml"
        if Path(name).is_dir() and found.is_file():
            try:
                return found.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
    return None


def _manifests(paths: Sequence[str]) -> Iterable[tuple[Path, str]]:
    """The files that may pin TensorFlow (``tf_runtime.is_manifest``) in the folders named."""
    for name in paths:
        path = Path(name)
        if not path.is_dir():
            continue
        for found in _walked(path):
            if is_manifest(found.name) and found.is_file():
                try:
                    yield found, found.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue


def check_contents(contents: dict[str, bytes], loaded_rules: LoadedRules, links: Sequence[str] = (),
                   manifests: Mapping[str, str] = {}, tensorflow: Optional[str] = None,
                   tops: Sequence[str] = ()) -> list[Site]:
    """Sites needing migration in files given as ``{path: bytes}`` and in the symlinks
    ``links`` (one site each: not followed), in path and line order.

    The files count as one repository: repository-wide facts (``uses tf.device``) are
    gathered over all of them, as ``run`` does, and so is the TensorFlow runtime (from
    ``tensorflow``, the ``manifests`` by path, or the code; ``tops``: the folders given, each a
    repository's top, whose pins are no folder's of its own: ``tf_scopes``).
    """
    found = loaded_rules.repository_facts(contents.items()).facts
    facts, messages = decided_facts(tensorflow, manifests, found, tops, code_folders(manifests, contents))
    # what of the pins and settings could not be read, or left the version open: as ``run``
    sites = [Site(message.path or ".", 1, 0, (message.rule or FILE_RULE)[0], message.text)
             for message in messages if message.rule is None or message.rule[0] in loaded_rules.engine.enabled]
    for path, data in contents.items():
        sites += outcome_sites(loaded_rules.engine.process(data, path, facts=facts))
    sites += [Site(path, line, 0, FILE_RULE_ID, message)
              for path, line, message in [*star_findings(found, lambda path: source_text(contents.get(path))),
                                          *keras_findings(found, facts),
                                          *tflearn_findings(found, facts)]]
    sites += [Site(path, 1, 0, FILE_RULE_ID, SYMLINK) for path in links]
    return sorted(sites, key=lambda s: (s.path, s.line, s.column, s.rule_id))


def outcome_sites(outcome: FileOutcome) -> list[Site]:
    """The sites of one processed file that need migrating: every finding that needs a
    person, and when ``run`` would change the file, every site it rewrites there."""
    sites = [Site(f.path, f.line, f.column, f.rule_id, f.message, f.trace)
             for f in outcome.findings if f.status in NEEDS_PERSON]
    if outcome.new_data is None:
        return sites  # nothing is rewritten (or the rewrite was undone: an error finding says so)
    for finding in outcome.findings:
        fix = rewrite_instruction(finding)
        if fix:
            sites.append(Site(finding.path, finding.line, finding.column, finding.rule_id,
                              f"{FIXABLE} {fix}"))
    return sites

