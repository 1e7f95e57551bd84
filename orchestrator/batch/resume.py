"""``--only-failed RUN_JSON``: resume a campaign from an earlier run's record.

The list's entries that the earlier run finished are not processed again: their records are
carried over into the new run's record (``carried_over``: the id of the run that made them,
and a note), so the new reports cover every repository of the list, not only the retried ones,
and the history gets one point for the whole campaign instead of a false drop. The entries
that failed there, that it deferred, or that it did not have (added to the list since) are
processed.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.repolist import RepoEntry

#: Statuses of a repository that is done for this state of the campaign.
FINISHED = frozenset({"changed", "unchanged"})


def carried_records(entries: Sequence[RepoEntry], earlier: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """The records of ``earlier`` to carry over, by the index of their entry in ``entries``."""
    finished = {}
    for record in earlier["repos"]:
        if record.get("status") in FINISHED:
            finished[(record.get("repo"), record.get("location"))] = record
    run_id = earlier.get("id") or earlier.get("started") or "?"
    carried = {}
    for index, entry in enumerate(entries):
        record = finished.get((entry.name, mask_secrets(entry.location)))
        if record is not None and entry.error is None:
            carried[index] = carried_over(record, run_id)
    return carried


def carried_over(record: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    """``record`` marked as carried over from the run ``run_id`` (an earlier carry keeps the
    run that really made it)."""
    if record.get("carried_over"):
        return dict(record)
    notes = [*record.get("notes", ()), f"carried over from run {run_id} (--only-failed)"]
    return {**record, "carried_over": run_id, "notes": notes}
