"""Findings: what a rule saw at one site, as plain records that cross process boundaries."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, Mapping

Status = Literal["migrated", "unmigrated", "error"]
STATUSES: tuple[Status, ...] = ("migrated", "unmigrated", "error")

#: Column order of ``findings.csv``; also the field order of :class:`Finding`.
FINDING_FIELDS = ("repo", "path", "line", "column", "rule_id", "rule_name", "status", "message")


@dataclass(frozen=True, order=True)
class Finding:
    """One site in one file that a rule recognised.

    ``line`` (1-based) and ``column`` (0-based) point into the *original* file, so ``scan``
    and ``run`` name the same places.
    """

    repo: str
    path: str
    line: int
    column: int
    rule_id: str
    rule_name: str
    status: Status
    message: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Finding":
        return cls(**{name: data[name] for name in FINDING_FIELDS})
