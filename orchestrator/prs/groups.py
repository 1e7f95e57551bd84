"""``--split-by``: cutting one repository's change into groups, each with its own branch and PR.

``codeowners`` groups files by their owners in the repository's CODEOWNERS (the same owners
form one group; files nobody owns form ``unowned``); ``directory`` groups them by top-level
directory (files at the root form ``root``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Literal, Optional

from npu_codemod.orchestrator.prs.codeowners import find_codeowners, owners_of, parse_codeowners

SplitBy = Literal["codeowners", "directory"]
SPLIT_CHOICES = ("codeowners", "directory")


@dataclass(frozen=True)
class Group:
    """A slice of a change: ``name`` is a branch-safe slug; ``owners`` review it."""

    name: str
    owners: tuple[str, ...] = ()


def grouper(split_by: SplitBy, read: Callable[[str], Optional[str]]) -> Callable[[str], Group]:
    """A function giving each path its group; ``read(path)`` reads a file at the base commit."""
    if split_by == "directory":
        return lambda path: Group(slugify(path.split("/")[0]) if "/" in path else "root")
    rules = parse_codeowners(find_codeowners(read) or "")

    def by_owners(path: str) -> Group:
        owners = owners_of(rules, path)
        return Group(slugify("_".join(o.lstrip("@") for o in owners)) or "unowned", owners)

    return by_owners


def group_paths(paths: Iterable[str], group_of: Callable[[str], Group]) -> dict[Group, list[str]]:
    """Paths by group, groups in name order, paths sorted."""
    groups: dict[Group, list[str]] = {}
    for path in sorted(set(paths)):
        groups.setdefault(group_of(path), []).append(path)
    return dict(sorted(groups.items(), key=lambda item: item[0].name))


def slugify(text: str) -> str:
    """Lower-case ``[a-z0-9._-]`` text, safe as the last component of a branch name."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower().replace("/", "-")).strip("-.")
    return re.sub(r"\.{2,}", ".", slug).removesuffix(".lock")
