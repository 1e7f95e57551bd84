"""The run record: everything a run did, as plain data (written as ``run.json``)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import uuid
from typing import Any, Iterable, Mapping, Optional, Sequence

from npu_codemod import __version__
from npu_codemod.codemods.rule import Rule
from npu_codemod.plugins.manager import Plugins

RUN_RECORD_VERSION = 1


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def rule_info(rule: Rule, plugins: Optional[Plugins] = None) -> dict[str, Any]:
    """A rule's metadata, its plugin and package, and its settings as used."""
    plugin = plugins.plugin_of(rule) if plugins else None
    settings = rule.settings
    instance = dataclasses.is_dataclass(settings) and not isinstance(settings, type)
    return {
        "id": rule.id,
        "name": rule.name,
        "pack": rule.pack,
        "description": rule.description,
        "guide_section": rule.guide_section,
        "guide_section_en": rule.guide_section_en,
        "guide_url": rule.guide_url,
        "rewrites": rule.rewrites,
        "reports": rule.reports,
        "plugin": plugin.name if plugin else type(rule).__module__,
        "distribution": plugin.distribution if plugin else "",
        "version": plugin.version if plugin else "",
        "settings": dataclasses.asdict(settings) if instance else None,
    }


def pack_states(rules: Iterable[Rule], plugins: Optional[Plugins]) -> list[dict[str, Any]]:
    """Every installed rule's pack (``-``: rules of none): whether the run had it on (any of
    its rules ran), its rules, those that did not run, and the option that turns it on."""
    ran = {rule.id for rule in rules}
    every = plugins.rules() if plugins else [rule for rule in rules]
    packs: dict[str, list[str]] = {}
    for rule in every:
        packs.setdefault(rule.pack or "-", []).append(rule.id)
    states = []
    for name, ids in packs.items():
        ids = sorted(ids)
        on = any(rule_id in ran for rule_id in ids)
        enable = "" if on else f"--rules default,{name if name != '-' else ','.join(ids)}"
        states.append({"name": name, "on": on, "rules": ids,
                       "off_rules": [rule_id for rule_id in ids if rule_id not in ran],
                       "enable": enable})
    return states


def build_run_record(
    command: str,
    options: Mapping[str, Any],
    rules: Iterable[Rule],
    repos: Sequence[Mapping[str, Any]],
    started: str,
    plugins: Optional[Plugins] = None,
) -> dict[str, Any]:
    """The record of a finished run; ``repos`` (the repositories' records, as
    ``RepoResult.to_dict`` made them, in repo-list order) is kept as given: the batch passes
    its :class:`~.result_spool.ResultSpool`, read from disk by each report writer."""
    return {
        "version": RUN_RECORD_VERSION,
        "id": uuid.uuid4().hex,  # two runs can start and finish within the same second
        "tool": f"npu-codemod {__version__}",
        "command": command,
        "started": started,
        "finished": now(),
        "options": dict(options),
        "rules": [rule_info(rule, plugins) for rule in rules],
        "packs": pack_states(rules, plugins),
        "plugins": [dataclasses.asdict(info) for info in plugins.infos.values()] if plugins else [],
        "repos": repos,
    }
