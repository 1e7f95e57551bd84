"""The verdict of a repository, from its two runs: the first of :data:`records.VERDICTS`
that applies.

Runs are compared result by result, in order (each ``Session.run``, each Keras batch, epoch,
``evaluate`` and ``predict``): the same results must be training steps, fetch arrays of the
same shapes, and fetch the same values: float scalars and float arrays within ``rtol``
(relative to the larger magnitude; values within 1e-8 of each other are equal whatever their
size, and NaN equals NaN; a large array by its statistics and evenly spaced elements),
integers and anything else exactly. Then the trainable variables after the last training
step, and the metrics the script printed (to the precision they were printed with).
``equivalent`` needs evidence: at least one training step and the variables at the end.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional, Sequence

from npu_codemod.orchestrator.verify.records import Verdict, VerifyRecord
from npu_codemod.orchestrator.verify.requirements import OPTION, missing_module
from npu_codemod.orchestrator.verify.sandbox import SideRun
from npu_codemod.orchestrator.verify.settings import VerifySettings

ABS_TOL = 1e-8
#: Where an array's numbers are statistics (see the runtime's ``evidence``), their names.
_STATISTICS = ("sum of magnitudes", "sum of squares", "minimum", "maximum")
_WHOLE = 64  # arrays up to this many elements are recorded whole
#: Training steps whose values are named series (a Keras batch's logs, a TF 2.x loop's loss
#: and gradient norm), not fetches.
_NAMED_SERIES = ("fit", "train")


def judge(settings: VerifySettings, original: SideRun, migrated: SideRun) -> VerifyRecord:
    """The verdict (no ``no-command`` here: without a command nothing ran)."""
    base = VerifyRecord(verdict="equivalent", command=settings.command, source=settings.source,
                        steps=settings.steps, rtol=settings.rtol,
                        original_violations=original.violations, violations=migrated.violations,
                        original_s=original.seconds, migrated_s=migrated.seconds,
                        tensorflow=original.tensorflow or migrated.tensorflow,
                        isolation=original.isolation)
    early = _before_comparing(settings, original, migrated)
    if early is not None:
        verdict, reason, details = early
        return _with(base, verdict, reason, details)
    difference, compared, worst = compare_calls(original.calls, migrated.calls, settings.rtol)
    steps = sum(1 for call in original.calls[:compared] if call.get("step") is not None)
    evidence = describe_evidence(original, compared, series=settings.tensorflow == "2")
    base = _with(base, "equivalent", "", (), steps_compared=steps, calls_compared=compared,
                 max_rel_diff=worst, evidence=evidence)
    difference = difference or _later_difference(original, migrated, settings.rtol)
    stopped = _stopped_note(original, migrated, settings.tensorflow)
    if difference:
        return _with(base, "diverged", difference + stopped, ())
    if migrated.violations:  # a fact of the migrated run, whatever the evidence
        return _with(base, "violations", f"{len(migrated.violations)} NPU constraint(s) broken: "
                     + "; ".join(migrated.violations), migrated.violations)
    missing = _missing_evidence(steps, original)
    if missing:
        return _with(base, "inconclusive", f"nothing to compare ({missing}); compared: {evidence}", ())
    return _with(base, "equivalent", f"{evidence}: equal within rtol {settings.rtol:g}; max "
                 f"relative difference {worst:.3g}" + stopped, ())


def _before_comparing(settings: VerifySettings, original: SideRun,
                      migrated: SideRun) -> Optional[tuple[Verdict, str, tuple[str, ...]]]:
    """(verdict, reason, details) when the runs cannot be compared, else None."""
    if original.failed:
        error = _last_error(original.output_tail, original.exit_code)
        missing = missing_module(error)
        if missing and not settings.requirements:
            return ("inconclusive", f"missing package {missing}: the original cannot import it "
                    f"here ({OPTION} installs the repository's requirements.txt or setup.py "
                    f"install_requires into a cached environment): {error}", original.output_tail)
        return ("inconclusive", "the original does not run here: " + error, original.output_tail)
    if original.timed_out or migrated.timed_out:
        which = "the original" if original.timed_out else "the migrated run"
        return ("timeout", f"{which} did not finish within {settings.timeout:g} s "
                f"(timeout; {settings.steps} steps asked)", ())
    if not original.calls:
        return ("inconclusive", "nothing to compare (the original ran no Session.run nor Keras "
                "training: no TensorFlow session, or the command does not train)", original.output_tail)
    if migrated.failed:
        return ("migrated-fails", "the migrated run fails where the original does not: "
                + _last_error(migrated.output_tail, migrated.exit_code), migrated.output_tail)
    return None


def _later_difference(original: SideRun, migrated: SideRun, rtol: float) -> str:
    """The first difference of the variables at the end, then of the printed metrics."""
    return (compare_variables(original.variables, migrated.variables, rtol)
            or compare_printed(original.printed, migrated.printed, rtol))


def _missing_evidence(steps: int, original: SideRun) -> str:
    if not steps:
        return "no training step ran"
    if not original.variables:
        return "no trainable variables after the last training step"
    return ""


def _stopped_note(original: SideRun, migrated: SideRun, tensorflow: str = "1") -> str:
    if (original.stopped or migrated.stopped) and tensorflow == "2":
        return ("; stopped at the step limit (a TF 2.x training loop has no input the launcher "
                "can end): what follows it did not run")
    if original.stopped or migrated.stopped:
        return ("; stopped at the step limit (the training loop does not end when its input "
                "does): what follows it did not run")
    if original.replayed:
        return (f"; the training loop went on past the step limit without training ({original.replayed} "
                "step(s) answered with their last result), then the rest of the script ran")
    return ""


def describe_evidence(run: SideRun, compared: int, series: bool = False) -> str:
    """What was compared, in words: "6 training steps (2 fetched values each), ...", or with
    ``series`` (TF 2.x code) "loss and gradient norm over 20 training step(s), ..."."""
    calls = run.calls[:compared]
    training = [call for call in calls if call.get("step") is not None]
    parts = [_steps_compared(training, series)]
    others = len(calls) - len(training)
    if others:
        parts.append(f"{others} other result(s)")
    parameters = sum(math.prod(variable[2]) for variable in run.variables)
    parts.append(f"{len(run.variables)} variable(s) at the end ({parameters} parameters)")
    if run.printed:
        parts.append(f"{len(run.printed)} printed metric(s)")
    return ", ".join(parts)


def _steps_compared(training: Sequence[dict], series: bool) -> str:
    """The training steps compared: with ``series``, the series they carry when they are
    named (a TF 2.x Keras batch's logs and gradient norm, a TF 2.x loop's loss and gradient
    norm), else their number of values (a TF 1.x Keras batch logs its index and size too)."""
    if series and training and all(call.get("kind") in _NAMED_SERIES for call in training):
        names = list(dict.fromkeys(name for call in training for name in call.get("names", ())))
        if names:
            listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            return f"{listed} over {len(training)} training step(s)"
    per_step = max((_count(call) for call in training), default=0)
    return f"{len(training)} training step(s) ({per_step} fetched value(s) each)"


def _count(call: dict) -> int:
    return len(call.get("values", ())) + len(call.get("arrays", ()))


def compare_calls(original: Sequence[dict], migrated: Sequence[dict],
                  rtol: float) -> tuple[str, int, float]:
    """(the first difference or '', calls compared, max relative difference)."""
    worst = 0.0
    for index, (left, right) in enumerate(zip(original, migrated)):
        difference, worst = _compare_call(_where(index, left), left, right, rtol, worst)
        if difference:
            return difference, index, worst
    if len(original) != len(migrated):
        shorter = min(len(original), len(migrated))
        return (f"the original ran {len(original)} Session.run call(s), the migrated run "
                f"{len(migrated)}", shorter, worst)
    return "", len(original), worst


def _compare_call(where: str, left: dict, right: dict, rtol: float, worst: float) -> tuple[str, float]:
    if left.get("step") != right.get("step"):
        return (f"{where}: a training step in {'the original' if left.get('step') else 'the migrated run'}"
                " only", worst)
    if [s[1] for s in left.get("shapes", ())] != [s[1] for s in right.get("shapes", ())]:
        return (f"{where}: fetched arrays of shapes {_shapes(left)} in the original, "
                f"{_shapes(right)} in the migrated run", worst)
    if len(left.get("values", ())) != len(right.get("values", ())):
        return (f"{where}: {len(left['values'])} float value(s) fetched in the original, "
                f"{len(right['values'])} in the migrated run", worst)
    for name, a, b in zip(left.get("names", ()), left["values"], right["values"]):
        difference = relative_difference(a, b)
        if abs(a - b) <= ABS_TOL:  # False for NaN: judged by the relative difference
            continue
        if difference > rtol:
            return (f"{where}: {name or 'a fetched value'} = {a:.7g} in the original, {b:.7g} "
                    f"in the migrated run (relative difference {difference:.3g} > rtol {rtol:g})",
                    max(worst, difference))
        worst = max(worst, difference)
    return compare_arrays(where, left.get("arrays", ()), right.get("arrays", ()), rtol, worst)


def compare_arrays(where: str, original: Sequence[list], migrated: Sequence[list], rtol: float,
                   worst: float = 0.0) -> tuple[str, float]:
    """(the first difference of described values ``[name, kind, shape, numbers, digest]``,
    or '', and the max relative difference)."""
    if len(original) != len(migrated):
        return (f"{where}: {len(original)} other value(s) in the original, {len(migrated)} in "
                "the migrated run", worst)
    for left, right in zip(original, migrated):
        name = left[0] or "a value"
        if left[1:3] != right[1:3]:
            return (f"{where}: {name} is {_kind(left)} in the original, {_kind(right)} in the "
                    "migrated run", worst)
        if left[4] != right[4]:
            return f"{where}: {name} differs (its {_kind(left)} values are not the same)", worst
        difference, worst = _numbers(where, left, right, rtol, worst)
        if difference:
            return difference, worst
    return "", worst


def _numbers(where: str, left: list, right: list, rtol: float, worst: float) -> tuple[str, float]:
    exact = left[1] != "f"
    for position, (a, b) in enumerate(zip(left[3] or (), right[3] or ())):
        if (a == b) or (not exact and abs(a - b) <= ABS_TOL):
            continue
        difference = math.inf if exact else relative_difference(a, b)
        if difference > rtol:
            return (f"{where}: {left[0] or 'a value'}'s {_element(left, position)} = {a:.7g} in the "
                    f"original, {b:.7g} in the migrated run"
                    + ("" if exact else f" (relative difference {difference:.3g} > rtol {rtol:g})"),
                    max(worst, difference))
        worst = max(worst, difference)
    return "", worst


def compare_variables(original: Sequence[list], migrated: Sequence[list], rtol: float) -> str:
    """The first difference of the trainable variables after the last training step."""
    if len(original) != len(migrated):
        return (f"the original has {len(original)} trainable variable(s) after its last training "
                f"step, the migrated run {len(migrated)}")
    return compare_arrays("the variables after the last training step", original, migrated, rtol)[0]


def compare_printed(original: Sequence[list], migrated: Sequence[list], rtol: float) -> str:
    """The first difference of the printed metrics ``[name, text]``: equal within ``rtol``
    or within a unit of the last digit printed."""
    if len(original) != len(migrated):
        return (f"the original printed {len(original)} metric value(s), the migrated run "
                f"{len(migrated)}")
    for index, ((name, a), (other, b)) in enumerate(zip(original, migrated)):
        if name != other or not _printed_equal(a, b, rtol):
            return (f"printed metric {index + 1}: {name} {a} in the original, {other} {b} in "
                    "the migrated run")
    return ""


def _printed_equal(a: str, b: str, rtol: float) -> bool:
    """Equal within ``rtol``, or within one unit of the last digit of a value printed with 3
    significant digits or more (two values within ``rtol`` may round apart)."""
    x, y = float(a), float(b)
    unit = max(_last_digit(a), _last_digit(b)) if min(_digits(a), _digits(b)) >= 3 else 0.0
    return x == y or abs(x - y) <= max(unit * (1 + 1e-9), rtol * max(abs(x), abs(y)), ABS_TOL)


def _last_digit(text: str) -> float:
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def _digits(text: str) -> int:
    return len(text.lower().partition("e")[0].lstrip("+-").replace(".", "").lstrip("0"))


def relative_difference(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return 0.0 if math.isnan(a) and math.isnan(b) else math.inf
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def _kind(value: list) -> str:
    kind = {"f": "floating point", "i": "integer", "o": "non-numeric"}.get(value[1], value[1])
    return f"{kind} of shape ({', '.join(map(str, value[2]))})"


def _element(value: list, position: int) -> str:
    if math.prod(value[2]) <= _WHOLE:
        return f"element {position}"
    if position < len(_STATISTICS):
        return _STATISTICS[position]
    return f"sampled element {position - len(_STATISTICS) + 1}"


def _where(index: int, call: dict) -> str:
    kind = call.get("kind", "run")
    what = {"run": "Session.run call", "train": "training step of a TF 2.x loop"}.get(kind, f"result (Keras {kind})")
    step = call.get("step")
    return f"step {step} ({what} {index + 1})" if step else f"{what} {index + 1}"


def _shapes(call: dict) -> str:
    return ", ".join("(" + ", ".join(map(str, s[1])) + ")" for s in call.get("shapes", ())) or "none"


def _last_error(tail: Sequence[str], code: Optional[int]) -> str:
    """The error's last line (a Python traceback ends with it), else the exit code."""
    for line in reversed(tail):
        if line.strip():
            return f"{line.strip()} (exit code {code})"
    return f"exit code {code}"


def _with(record: VerifyRecord, verdict: Verdict, reason: str, details: tuple, **changes) -> VerifyRecord:
    return replace(record, verdict=verdict, reason=reason, details=tuple(details), **changes)
