"""CODEOWNERS (GitHub and GitLab syntax): who owns a path. The last matching rule wins.

Patterns follow the gitignore rules both forges document: ``*.py`` matches at any depth,
a pattern with a ``/`` other than a trailing one is anchored at the root, ``dir/`` matches
everything below any ``dir``, ``docs/*`` matches files directly in ``docs`` only, and
``**`` crosses directories. GitLab ``[Section] @owners`` headers give default owners to the
rules below them that name none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

#: Where the forges look for the file, in their order of precedence.
CODEOWNERS_PATHS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS")
_SECTION = re.compile(r"^\^?\[(?P<name>[^\]]+)\](?:\[\d+\])?(?P<owners>.*)$")


@dataclass(frozen=True)
class OwnerRule:
    pattern: str
    owners: tuple[str, ...]
    regex: re.Pattern


def parse_codeowners(text: str) -> list[OwnerRule]:
    """The rules of a CODEOWNERS file, in file order (comments and blank lines dropped)."""
    rules: list[OwnerRule] = []
    section_owners: tuple[str, ...] = ()
    for raw in text.splitlines():
        line = _strip_comment(raw).strip()
        if not line:
            continue
        section = _SECTION.match(line)
        if section:
            section_owners = tuple(section.group("owners").split())
            continue
        fields = re.split(r"(?<!\\)\s+", line)
        pattern = fields[0].replace("\\ ", " ")
        rules.append(OwnerRule(pattern, tuple(fields[1:]) or section_owners, _compile(pattern)))
    return rules


def owners_of(rules: Sequence[OwnerRule], path: str) -> tuple[str, ...]:
    """Owners of ``path`` (relative, ``/``-separated): those of the last matching rule."""
    for rule in reversed(rules):
        if rule.regex.match(path):
            return rule.owners
    return ()


def find_codeowners(read: Callable[[str], Optional[str]]) -> Optional[str]:
    """The text of the first CODEOWNERS file ``read`` finds among :data:`CODEOWNERS_PATHS`."""
    for path in CODEOWNERS_PATHS:
        text = read(path)
        if text is not None:
            return text
    return None


def _strip_comment(line: str) -> str:
    return re.split(r"(?<!\\)#", line, maxsplit=1)[0]


def _compile(pattern: str) -> re.Pattern:
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    directory_only = pattern.endswith("/")
    body = pattern.strip("/")
    regex = "" if anchored else "(?:.*/)?"
    regex += _translate(body)
    if directory_only:
        regex += "/.*"
    elif not body.endswith("/*"):  # a match may be a directory: everything below it too
        regex += "(?:/.*)?"
    return re.compile(regex + r"\Z")


def _translate(glob: str) -> str:
    out, index = [], 0
    while index < len(glob):
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif glob[index] == "*":
            out.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(glob[index]))
            index += 1
    return "".join(out)
