"""The verdict of a repository, from its two runs: the first of :data:`records.VERDICTS`
that applies.

Runs are compared ``Session.run`` call by call, in order: the same calls must be training
steps, fetch arrays of the same shapes, and fetch float scalars equal within ``rtol``
(relative to the larger magnitude; values within 1e-8 of each other are equal whatever
their size, and NaN equals NaN).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

from npu_codemod.orchestrator.verify.records import Verdict, VerifyRecord
from npu_codemod.orchestrator.verify.sandbox import SideRun
from npu_codemod.orchestrator.verify.settings import VerifySettings

ABS_TOL = 1e-8


def judge(settings: VerifySettings, original: SideRun, migrated: SideRun) -> VerifyRecord:
    """The verdict (no ``no-command`` here: without a command nothing ran)."""
    base = VerifyRecord(verdict="equivalent", command=settings.command, source=settings.source,
                        steps=settings.steps, rtol=settings.rtol,
                        original_violations=original.violations, violations=migrated.violations,
                        original_s=original.seconds, migrated_s=migrated.seconds,
                        tensorflow=original.tensorflow or migrated.tensorflow)
    early = _before_comparing(settings, original, migrated)
    if early is not None:
        verdict, reason, details = early
        return _with(base, verdict, reason, details)
    difference, compared, worst = compare_calls(original.calls, migrated.calls, settings.rtol)
    steps = sum(1 for call in original.calls[:compared] if call.get("step") is not None)
    base = _with(base, "equivalent", "", (), steps_compared=steps, calls_compared=compared,
                 max_rel_diff=worst)
    if difference:
        return _with(base, "diverged", difference, ())
    if migrated.violations:
        return _with(base, "violations", f"{len(migrated.violations)} NPU constraint(s) broken: "
                     + "; ".join(migrated.violations), migrated.violations)
    return _with(base, "equivalent", f"{steps} training step(s) ({compared} Session.run calls) "
                 f"equal within rtol {settings.rtol:g}; max relative difference {worst:.3g}", ())


def _before_comparing(settings: VerifySettings, original: SideRun,
                      migrated: SideRun) -> Optional[tuple[Verdict, str, tuple[str, ...]]]:
    """(verdict, reason, details) when the runs cannot be compared, else None."""
    if original.failed:
        return ("inconclusive", "the original does not run here: "
                + _last_error(original.output_tail, original.exit_code), original.output_tail)
    if original.timed_out or migrated.timed_out:
        which = "the original" if original.timed_out else "the migrated run"
        return ("timeout", f"{which} did not finish within {settings.timeout:g} s "
                f"(timeout; {settings.steps} steps asked)", ())
    if not original.calls:
        return ("inconclusive", "the original ran no Session.run (no TensorFlow session, or the "
                "command does not train): nothing to compare", original.output_tail)
    if migrated.failed:
        return ("migrated-fails", "the migrated run fails where the original does not: "
                + _last_error(migrated.output_tail, migrated.exit_code), migrated.output_tail)
    return None


def compare_calls(original: Sequence[dict], migrated: Sequence[dict],
                  rtol: float) -> tuple[str, int, float]:
    """(the first difference or '', calls compared, max relative difference)."""
    worst = 0.0
    for index, (left, right) in enumerate(zip(original, migrated)):
        where = _where(index, left)
        if left.get("step") != right.get("step"):
            return (f"{where}: a training step in {'the original' if left.get('step') else 'the migrated run'}"
                    " only", index, worst)
        if [s[1] for s in left.get("shapes", ())] != [s[1] for s in right.get("shapes", ())]:
            return (f"{where}: fetched arrays of shapes {_shapes(left)} in the original, "
                    f"{_shapes(right)} in the migrated run", index, worst)
        if len(left.get("values", ())) != len(right.get("values", ())):
            return (f"{where}: {len(left['values'])} float value(s) fetched in the original, "
                    f"{len(right['values'])} in the migrated run", index, worst)
        for name, a, b in zip(left.get("names", ()), left["values"], right["values"]):
            difference = relative_difference(a, b)
            if abs(a - b) <= ABS_TOL:  # False for NaN: judged by the relative difference
                continue
            if difference > rtol:
                return (f"{where}: {name or 'a fetched value'} = {a:.7g} in the original, {b:.7g} "
                        f"in the migrated run (relative difference {difference:.3g} > rtol {rtol:g})",
                        index, max(worst, difference))
            worst = max(worst, difference)
    if len(original) != len(migrated):
        shorter = min(len(original), len(migrated))
        return (f"the original ran {len(original)} Session.run call(s), the migrated run "
                f"{len(migrated)}", shorter, worst)
    return "", len(original), worst


def relative_difference(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return 0.0 if math.isnan(a) and math.isnan(b) else math.inf
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def _where(index: int, call: dict) -> str:
    step = call.get("step")
    return f"step {step} (Session.run call {index + 1})" if step else f"Session.run call {index + 1}"


def _shapes(call: dict) -> str:
    return ", ".join("(" + ", ".join(map(str, s[1])) + ")" for s in call.get("shapes", ())) or "none"


def _last_error(tail: Sequence[str], code: Optional[int]) -> str:
    """The error's last line (a Python traceback ends with it), else the exit code."""
    for line in reversed(tail):
        if line.strip():
            return f"{line.strip()} (exit code {code})"
    return f"exit code {code}"


def _with(record: VerifyRecord, verdict: Verdict, reason: str, details: tuple, **changes) -> VerifyRecord:
    from dataclasses import replace

    return replace(record, verdict=verdict, reason=reason, details=tuple(details), **changes)
