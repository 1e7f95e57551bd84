"""Parsing the repo list: one ``PATH_OR_URL [BASE_REF] [key=value ...]`` entry a line.

Fields are separated by whitespace; a field holding spaces is written in double quotes
(``"../my models/bert" main``), an option's value too (``verify="python train.py --steps 20"``);
``#`` always starts a comment.

Options: ``slug=OWNER/NAME`` (the forge's name of the repository), ``verify="COMMAND"`` (what
``npu-codemod verify`` runs in it, before the repository's own ``[tool.npu-codemod.verify]``). A bad line does not stop the batch: it becomes an entry with an ``error``, reported as that
repo's failed result, so the other repos are still processed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from npu_codemod.orchestrator.redact import mask_secrets

#: Per-entry options a line may carry after the base ref: the repository's ``owner/name`` on
#: the forge, its wave (a whole number: waves start in order, then entries without one), and
#: its verify command.
ENTRY_OPTIONS = frozenset({"slug", "wave", "verify"})
#: Lines as an editor numbers them (``str.splitlines`` also splits at form feeds and such).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: One field: a double-quoted string (no escapes), ``key="value"``, or a run of non-space,
#: non-quote characters.
_FIELD = re.compile(r'\s*(?:"([^"]*)"|(\w+=)"([^"]*)"|([^\s"]+))(?=\s|$)')
_URL = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*://|[\w.-]+@[\w.-]+:)")


@dataclass(frozen=True)
class RepoEntry:
    """One repository to migrate, as the list names it and where it really is."""

    name: str  # as written in the list (credentials masked): the repo's name in reports
    location: str  # absolute local path, or the URL
    base_ref: Optional[str] = None
    options: tuple[tuple[str, str], ...] = ()
    line: int = 0
    error: Optional[str] = None
    source: str = ""  # the list it came from ("repos.txt", "<stdin>"), to cite file:line

    def cite(self, message: str) -> str:
        """``message`` about what the list says of this entry, prefixed with its ``file:line``."""
        return f"{self.source}:{self.line}: {message}" if self.source and self.line else message

    @property
    def is_url(self) -> bool:
        return bool(_URL.match(self.location))

    def option(self, key: str) -> Optional[str]:
        return dict(self.options).get(key)

    @property
    def wave(self) -> float:
        """The entry's ``wave=`` (checked by the parser); entries without one come last."""
        wave = self.option("wave")
        return int(wave) if wave is not None else float("inf")


def parse_repo_list(text: str, base_dir: Path, source: str = "repo list") -> list[RepoEntry]:
    """Entries of a repo list; relative paths are resolved against ``base_dir``.

    The same repository listed twice (same resolved location and base) is kept once; listed
    again with another base it is an error entry: both would build the same branch.
    """
    entries: list[RepoEntry] = []
    seen: dict[str, tuple[Optional[str], int]] = {}  # location -> (base ref, line)
    for number, raw in enumerate(_LINE_BREAK.split(text), start=1):
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        entry = parse_line(line, number, base_dir, source)
        if entry.error is None and entry.location in seen:
            base_ref, first = seen[entry.location]
            if base_ref == entry.base_ref:
                continue
            entry = replace(entry, error=f"{source}:{number}: {entry.name!r} is already listed on "
                            f"line {first} with base {base_ref or 'HEAD'}: one migration branch per "
                            "repository and run (migrate another base in a run with its own --branch)")
        elif entry.error is None:
            seen[entry.location] = (entry.base_ref, number)
        entries.append(entry)
    return entries


def parse_line(line: str, number: int, base_dir: Path, source: str = "repo list") -> RepoEntry:
    """One entry; a malformed line gives an entry whose ``error`` names the line."""
    where = f"{source}:{number}"
    fields = _fields(line)
    if fields is None or not fields[0]:
        name = mask_secrets(line.split()[0])
        return RepoEntry(name, name, line=number, error=f"{where}: malformed entry {mask_secrets(line)!r}: "
                         'unbalanced or empty quotes (write a path with spaces as "my repo")')
    name = mask_secrets(fields[0])
    base_ref: Optional[str] = None
    options: list[tuple[str, str]] = []
    for extra in fields[1:]:
        key, sep, value = extra.partition("=")
        if sep and key == "wave" and not value.isdigit():
            return RepoEntry(name, fields[0], line=number,
                             error=f"{where}: wave={value!r}: expected a whole number (wave=1, wave=2, ...)")
        if sep and key in ENTRY_OPTIONS and value:
            options.append((key, value))
        elif not sep and base_ref is None and not options:
            base_ref = extra
        else:
            expected = "PATH_OR_URL [BASE_REF] [" + " ".join(f"{k}=..." for k in sorted(ENTRY_OPTIONS)) + "]"
            return RepoEntry(name, fields[0], line=number,
                             error=f"{where}: malformed entry {mask_secrets(line)!r}: expected {expected}")
    location = fields[0]
    if not _URL.match(location):
        try:
            location = str((base_dir / Path(location).expanduser()).resolve())
        except (RuntimeError, ValueError, OSError) as exc:  # ~nobody, a NUL byte, a loop
            return RepoEntry(name, fields[0], line=number,
                             error=f"{where}: unusable path {name!r}: {exc}")
    return RepoEntry(name, location, base_ref, tuple(options), number, source=source)


def _fields(line: str) -> Optional[list[str]]:
    """Whitespace-separated fields, double quotes grouping; None if the quoting is broken."""
    if '"' not in line:
        return line.split()
    fields, position = [], 0
    while line[position:].strip():
        match = _FIELD.match(line, position)
        if match is None:
            return None
        quoted, key, value, plain = match.groups()
        fields.append(quoted if quoted is not None else key + value if key else plain)
        position = match.end()
    return fields


def read_repo_list(path: str, stdin_text: Optional[str] = None) -> list[RepoEntry]:
    """Read ``--repos FILE`` (``-`` for stdin). Raises OSError/UnicodeDecodeError if unreadable."""
    if path == "-":
        return parse_repo_list((stdin_text or "").removeprefix("\ufeff"), Path.cwd(), "<stdin>")
    list_path = Path(path)  # utf-8-sig: a list saved by an editor that writes a BOM
    return parse_repo_list(list_path.read_text(encoding="utf-8-sig"), list_path.parent.resolve(), path)

