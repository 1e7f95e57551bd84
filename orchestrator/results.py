"""Per-repo outcomes: frozen, picklable records that workers return instead of raising."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, Mapping, Optional

from npu_codemod.codemods.findings import Finding

RepoStatus = Literal["changed", "unchanged", "failed"]


@dataclass(frozen=True)
class RepoResult:
    """What happened to one repository."""

    repo: str
    status: RepoStatus
    location: str = ""
    branch: Optional[str] = None
    base: Optional[str] = None
    commit: Optional[str] = None
    files_changed: tuple[str, ...] = ()
    files_scanned: int = 0
    error: Optional[str] = None
    notes: tuple[str, ...] = ()
    pushed: bool = False
    pr_url: Optional[str] = None
    patch: Optional[str] = None  # dry-run: the diff that would be committed
    findings: tuple[Finding, ...] = field(default=(), repr=False)

    def with_changes(self, **changes: Any) -> "RepoResult":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["files_changed"] = list(self.files_changed)
        data["notes"] = list(self.notes)
        data["findings"] = [finding.to_dict() for finding in self.findings]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RepoResult":
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["files_changed"] = tuple(fields.get("files_changed", ()))
        fields["notes"] = tuple(fields.get("notes", ()))
        fields["findings"] = tuple(Finding.from_dict(f) for f in data.get("findings", ()))
        return cls(**fields)


def failed(repo: str, error: str, location: str = "", **extra: Any) -> RepoResult:
    """A failed result: one human sentence in ``error``, no traceback."""
    return RepoResult(repo=repo, status="failed", location=location, error=error, **extra)
