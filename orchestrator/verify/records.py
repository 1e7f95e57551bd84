"""A repository's verification, as it crosses process boundaries and lands in the reports."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterable, Literal, Optional

Verdict = Literal["no-command", "inconclusive", "timeout", "migrated-fails", "diverged",
                  "violations", "equivalent"]
#: In the order they are judged: the first that applies is the verdict.
VERDICTS: tuple[Verdict, ...] = ("no-command", "inconclusive", "timeout", "migrated-fails",
                                 "diverged", "violations", "equivalent")
#: Verdicts that say the migration is wrong.
FAILING: frozenset[str] = frozenset({"migrated-fails", "diverged", "violations"})
#: Verdicts that prove nothing either way: ``--allow`` may accept them; every other verdict
#: but ``equivalent`` makes ``verify`` (and ``run --verify``) exit with 1.
ALLOWABLE: tuple[Verdict, ...] = ("inconclusive", "no-command", "timeout")


def unproven(verdicts: Iterable[str], allow: Iterable[str] = ()) -> list[str]:
    """The verdicts (of the repositories verified) that are not ``equivalent`` nor allowed."""
    allowed = {"equivalent", *allow}
    return [verdict for verdict in verdicts if verdict and verdict not in allowed]


@dataclass(frozen=True)
class VerifyRecord:
    """One verdict and what it rests on.

    ``reason`` is one line (the first differing step, the error's last line...); ``details``
    the lines behind it (the error's last lines of output); ``violations`` the NPU
    constraints the migrated run broke, ``original_violations`` those of the original (what
    the migration was to fix)."""

    verdict: Verdict
    reason: str = ""
    command: Optional[str] = None
    source: str = ""  # where the command came from
    steps: int = 0  # the step limit
    steps_compared: int = 0
    calls_compared: int = 0
    evidence: str = ""  # what was compared, in words ("6 training steps, 2 fetched values...")
    max_rel_diff: Optional[float] = None
    rtol: float = 0.0
    violations: tuple[str, ...] = ()
    original_violations: tuple[str, ...] = ()
    details: tuple[str, ...] = ()
    base: Optional[str] = None
    commit: Optional[str] = None  # the migrated commit (the base itself when nothing changed)
    original_s: Optional[float] = None  # seconds of each run
    migrated_s: Optional[float] = None
    tensorflow: str = ""
    isolation: str = ""  # what confined the runs (sandbox.isolation)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("violations", "original_violations", "details"):
            data[key] = list(data[key])
        return data

