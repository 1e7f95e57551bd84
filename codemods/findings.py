"""Findings: what a rule saw at one site, as plain records that cross process boundaries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

Status = Literal["migrated", "unmigrated", "error"]
STATUSES: tuple[Status, ...] = ("migrated", "unmigrated", "error")

#: Column order of ``findings.csv``; also the order of the required fields of :class:`Finding`.
FINDING_FIELDS = ("repo", "path", "line", "column", "rule_id", "rule_name", "status", "message")


@dataclass(frozen=True, order=True)
class Finding:
    """One site in one file that a rule recognised.

    ``line`` (1-based) and ``column`` (0-based) point into the *original* file, so ``scan``
    and ``run`` name the same places. ``snippet`` is a few numbered lines of the original
    file around a site that needs a person (set by the pipeline; not a CSV column, not part
    of equality).
    """

    repo: str
    path: str
    line: int
    column: int
    rule_id: str
    rule_name: str
    status: Status
    message: str
    snippet: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, Any]:
        # Not dataclasses.asdict: its deep copy is several times slower, and every field is
        # a plain value; the parent builds thousands of these while its workers wait.
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Finding":
        return cls(**{name: data[name] for name in FINDING_FIELDS}, snippet=data.get("snippet", ""))
