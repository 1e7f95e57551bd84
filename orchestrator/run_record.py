"""The run record: everything a run did, as plain data (written as ``run.json``), and as the
typed record every report reads (:class:`RunRecord`, built once from that data, whether a run
just made it or an old ``run.json`` holds it)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Optional, Sequence, Union, overload

from npu_codemod import __version__
from npu_codemod.orchestrator.results import RepoResult, known_fields

if TYPE_CHECKING:
    from npu_codemod.codemods.rule import Rule
    from npu_codemod.plugins.manager import Plugins

RUN_RECORD_VERSION = 1


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RuleRecord:
    """A rule as a run had it: its metadata, its plugin and package, its settings as used."""

    id: str
    name: str = ""
    pack: str = ""
    description: str = ""
    guide_section: str = ""
    guide_section_en: str = ""
    guide_url: str = ""
    rewrites: str = ""
    reports: str = ""
    #: ``Rule.audits_apis``: an API audit, whose findings rules coverage leaves out.
    audits_apis: bool = False
    plugin: str = ""
    distribution: str = ""
    version: str = ""
    settings: Optional[Mapping[str, Any]] = None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class PackState:
    """A rule pack as a run had it: on or off, its rules, those that did not run, and the
    option that turns it on."""

    name: str
    on: bool
    rules: tuple[str, ...]
    off_rules: tuple[str, ...] = ()
    enable: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "on": self.on, "rules": list(self.rules),
                "off_rules": list(self.off_rules), "enable": self.enable}


def rule_record(rule: Rule, plugins: Optional[Plugins] = None) -> RuleRecord:
    """A rule's metadata, its plugin and package, and its settings as used."""
    plugin = plugins.plugin_of(rule) if plugins else None
    settings = rule.settings
    instance = dataclasses.is_dataclass(settings) and not isinstance(settings, type)
    return RuleRecord(
        id=rule.id, name=rule.name, pack=rule.pack, description=rule.description,
        guide_section=rule.guide_section, guide_section_en=rule.guide_section_en,
        guide_url=rule.guide_url, rewrites=rule.rewrites, reports=rule.reports,
        audits_apis=rule.audits_apis, plugin=plugin.name if plugin else type(rule).__module__,
        distribution=plugin.distribution if plugin else "",
        version=plugin.version if plugin else "",
        settings=dataclasses.asdict(settings) if instance else None)


def rule_info(rule: Rule, plugins: Optional[Plugins] = None) -> dict[str, Any]:
    """:func:`rule_record` as ``run.json`` and ``rules --format json`` hold it."""
    return rule_record(rule, plugins).to_dict()


def pack_states(rules: Iterable[Rule], plugins: Optional[Plugins]) -> list[PackState]:
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
        states.append(PackState(name, on, tuple(ids),
                                tuple(rule_id for rule_id in ids if rule_id not in ran), enable))
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
        "packs": [state.to_dict() for state in pack_states(rules, plugins)],
        "plugins": [dataclasses.asdict(info) for info in plugins.infos.values()] if plugins else [],
        "repos": repos,
    }


#: A spool of at most this many bytes of JSON is read and typed once, and its records kept for
#: the other report passes (eight in a scan: twelve small repositories' records, 0.7 MB,
#: decoded and typed again on each pass cost about 1% of their scan); typed, they take about
#: 1.6 bytes per byte of JSON. A larger spool is read on each pass, one record at a time.
KEEP_TYPED_BYTES = 2 << 20


class RepoRecords(Sequence[RepoResult]):
    """The repositories of a run record, typed as they are read. The batch's are read from disk
    (its spool, whose ``size`` is the bytes it holds): a small spool's are typed once and kept,
    a large one's are made one at a time on each pass, never kept."""

    def __init__(self, records: Sequence[Mapping[str, Any]]) -> None:
        self.records = records
        size = getattr(records, "size", None)
        self._kept: Optional[dict[int, RepoResult]] = (
            {} if isinstance(size, int) and size <= KEEP_TYPED_BYTES else None)

    def _typed(self, index: int) -> RepoResult:
        kept = self._kept
        if kept is None:
            return RepoResult.from_dict(self.records[index])
        result = kept.get(index)
        if result is None:
            result = kept[index] = RepoResult.from_dict(self.records[index])
        return result

    def __iter__(self) -> Iterator[RepoResult]:
        if self._kept is None:
            return (RepoResult.from_dict(record) for record in self.records)
        return (self._typed(index) for index in range(len(self.records)))

    def __len__(self) -> int:
        return len(self.records)

    @overload
    def __getitem__(self, index: int) -> RepoResult: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[RepoResult]: ...

    def __getitem__(self, index: Union[int, slice]) -> Union[RepoResult, Sequence[RepoResult]]:
        if isinstance(index, slice):
            return [self._typed(inner) for inner in range(len(self.records))[index]]
        return self._typed(index)


@dataclass(frozen=True)
class RunRecord:
    """A run as every report reads it: the typed form of ``run.json``.

    Built from the run record's data (:func:`build_run_record`'s, or an old ``run.json``:
    fields added since take their defaults); ``packs`` is None in records older than packs.
    The totals ``run.json`` also holds (``api_readiness``, ``sites``, ``verdicts``) are not
    kept: the reports count them from the repositories (``reports.summary.Overview``).
    """

    repos: RepoRecords
    version: int = RUN_RECORD_VERSION
    id: str = ""
    tool: str = ""
    command: str = ""
    started: str = ""
    finished: str = ""
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    rules: tuple[RuleRecord, ...] = ()
    packs: Optional[tuple[PackState, ...]] = None
    plugins: tuple[Mapping[str, Any], ...] = ()
    interrupted: bool = False

    @classmethod
    def of(cls, run: Union["RunRecord", Mapping[str, Any]]) -> "RunRecord":
        """``run`` typed (as it is when it already is)."""
        if isinstance(run, RunRecord):
            return run
        packs = run.get("packs")
        return cls(**{**known_fields(cls, run),
                      "repos": RepoRecords(run["repos"]),
                      "options": dict(run.get("options") or {}),
                      "rules": tuple(RuleRecord(**known_fields(RuleRecord, rule))
                                     for rule in run.get("rules") or ()),
                      "packs": None if packs is None else tuple(
                          PackState(**known_fields(PackState, pack)) for pack in packs),
                      "interrupted": bool(run.get("interrupted"))})

    def option(self, name: str, default: Any = None) -> Any:
        """The value of one of the run's options (``default`` when the run did not record it)."""
        return self.options.get(name, default)
