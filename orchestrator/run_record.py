"""The run record: everything a run did, as plain data (written as ``run.json``)."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Iterable, Mapping

from npu_codemod import __version__
from npu_codemod.codemods.rule import Rule

from .results import RepoResult

RUN_RECORD_VERSION = 1


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def rule_info(rule: Rule) -> dict[str, str]:
    return {
        "id": rule.id,
        "name": rule.name,
        "description": rule.description,
        "guide_section": rule.guide_section,
        "plugin": type(rule).__module__,
    }


def build_run_record(
    command: str,
    options: Mapping[str, Any],
    rules: Iterable[Rule],
    results: Iterable[RepoResult],
    started: str,
) -> dict[str, Any]:
    return {
        "version": RUN_RECORD_VERSION,
        "tool": f"npu-codemod {__version__}",
        "command": command,
        "started": started,
        "finished": now(),
        "options": dict(options),
        "rules": [rule_info(rule) for rule in rules],
        "repos": [result.to_dict() for result in results],
    }
