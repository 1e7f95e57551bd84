"""API use sites by support status: what the API-support audit (NPU100) counted, and readiness.

An audit rule looks up every TensorFlow or Horovod API a file uses in Ascend's support list and
counts each use site with :meth:`FileContext.count_api <npu_codemod.codemods.rule.FileContext.
count_api>`, whether or not it reports a finding there (``supported`` sites never are). The
engine hands a file's counts on as ``FileOutcome.api_sites``, the pipeline adds them up per
repository (``RepoResult.api_sites``, also in ``run.json``) and the reports compute the **API
readiness** from them: of the sites with a known status, the share that need nothing
(``supported``, ``unsupported-harmless``, and ``compat-alias`` spellings of those, which the
audit resolves first) or that a rule's ``migrated`` finding covers.

The counts are records, not findings: :class:`ApiSites` rows that survive the result cache,
the spooled results and a re-rendered ``run.json``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from npu_codemod.codemods.findings import Finding

#: How NPU100's finding on a TensorFlow use it could not resolve begins (a repository function
#: that picks or looks up the module it returns): counted ``unknown``, and counted apart by the
#: reports (:func:`unresolved_uses`) so a readiness figure says what it could not see.
UNRESOLVED_ACCESS = "unresolved TensorFlow access"


def unresolved_uses(findings: Iterable[Finding]) -> int:
    """How many of a repository's findings are TensorFlow uses NPU100 could not resolve."""
    return sum(1 for finding in findings if finding.rule_id == "NPU100"
               and finding.message.startswith(UNRESOLVED_ACCESS))


class ApiStatus:
    """The statuses of Ascend's support list, as ``ctx.count_api`` and the reports use them.

    ``compat-alias`` entries are resolved to the status of the API they alias before a site is
    counted; ``unknown`` is a name with no listed prefix below the namespace (``tf.float32``).
    """

    SUPPORTED = "supported"
    HARMLESS = "unsupported-harmless"
    AFTER_MIGRATION = "supported-after-migration"
    TRAINS_AFTER_MIGRATION = "trains-after-migration"
    UNSUPPORTED = "unsupported"
    DEPRECATED = "deprecated"
    UNDER_ANALYSIS = "under-analysis"
    COMPAT_ALIAS = "compat-alias"
    UNKNOWN = "unknown"
    #: A site of an API with one of these statuses needs nothing on the NPU.
    READY = frozenset({SUPPORTED, HARMLESS})
    #: Ascend migrates these: a rule of the project owns each such API.
    MIGRATED = frozenset({AFTER_MIGRATION, TRAINS_AFTER_MIGRATION})
    #: The statuses as the reports order them: most work first.
    ORDER = (UNSUPPORTED, DEPRECATED, UNDER_ANALYSIS, AFTER_MIGRATION, TRAINS_AFTER_MIGRATION,
             HARMLESS, SUPPORTED, UNKNOWN)


#: What to do about a site, per status (``{api}``: the API as the site uses it); the owner-miss
#: text is for a site of an API Ascend migrates that no enabled rule covered.
ADVICE = {
    ApiStatus.UNSUPPORTED: "not supported on Ascend and no migration path: replace {api}",
    ApiStatus.DEPRECATED: "deprecated in TF 1.15: replace {api} with its public TF 1.15 "
                          "equivalent before migrating, or the migration may fail",
    ApiStatus.UNDER_ANALYSIS: "support on Ascend is not established: test {api} on the NPU",
}
OWNER_MISS = ("Ascend migrates {api}, but no enabled npu-codemod rule covered this use: "
              "migrate it as the guide says")


def advice(status: str, api: str = "it") -> str:
    """What to do about a site of ``api`` with support ``status`` that no rule covered (for an
    API Ascend migrates: the owner-miss text)."""
    return ADVICE.get(status, OWNER_MISS).format(api=api)


@dataclass(frozen=True, order=True)
class ApiSites:
    """``sites`` use sites of ``api`` (the listed name: ``tf.contrib.slim`` for a use of
    ``slim.conv2d``) with support ``status``; ``covered``: a ``migrated`` finding (or a rule
    that covers the API wherever it is enabled) takes care of them, or the audit counts them
    without a finding as needing nothing (NPU071's names used only as types: ``class
    L(tf.keras.layers.Layer)``, ``isinstance(x, tf.keras.layers.Layer)``, annotations).

    ``api`` is kept only where a person may have work (not ready, or ready through a rule): it
    is ``""`` for ``supported``, ``unsupported-harmless`` and ``unknown`` sites. ``owned``: a
    rule's ``unmigrated`` finding at the site says how to migrate it (NPU012's "remove
    CrossShardOptimizer"): not ready, but no block either (see ``merge_verdict``).
    """

    api: str
    status: str
    covered: bool
    sites: int
    owned: bool = False

    @property
    def ready(self) -> bool:
        """These sites need nothing more: ready as they are, or migrated."""
        return self.status in ApiStatus.READY or self.covered

    @property
    def known(self) -> bool:
        return self.status != ApiStatus.UNKNOWN

    @property
    def blocking(self) -> bool:
        """Sites of an API Ascend does not support that no rule says how to migrate."""
        return self.status == ApiStatus.UNSUPPORTED and not self.ready and not self.owned

    def to_dict(self) -> dict[str, Any]:
        data = {"api": self.api, "status": self.status, "covered": self.covered,
                "sites": self.sites}
        return {**data, "owned": True} if self.owned else data  # records before it: no key

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ApiSites":
        return cls(str(data.get("api", "")), str(data["status"]), bool(data.get("covered")),
                   int(data["sites"]), bool(data.get("owned")))

    @classmethod
    def of_key(cls, key: "SiteKey", sites: int) -> "ApiSites":
        api, status, covered, owned = key
        return cls(api, status, covered, sites, owned)


#: How a site is tallied: (api, status, covered, owned), see :class:`ApiSites`.
SiteKey = tuple[str, str, bool, bool]


def site_key(api: str, status: str, covered: bool, owned: bool = False) -> SiteKey:
    """How one site is tallied: by API only where a person may have work (see :class:`ApiSites`)."""
    keeps_api = status not in ApiStatus.READY and status != ApiStatus.UNKNOWN
    return (api if keeps_api else "", status, covered, owned and not covered and keeps_api)


def merge_sites(groups: Iterable[Iterable[ApiSites]]) -> tuple[ApiSites, ...]:
    """The sum of several tallies (a repository's files, a run's repositories), sorted."""
    total: Counter[SiteKey] = Counter()
    for group in groups:
        for row in group:
            total[(row.api, row.status, row.covered, row.owned)] += row.sites
    return tuple(sorted(ApiSites.of_key(key, sites) for key, sites in total.items() if sites))


def uncovered(sites: Iterable[ApiSites]) -> tuple[ApiSites, ...]:
    """``sites`` with no rule's coverage: the file's rewrite was undone (it did not compile)."""
    return merge_sites([[ApiSites(row.api, row.status, False, row.sites, row.owned) for row in sites]])


def readiness(sites: Iterable[ApiSites]) -> Optional[float]:
    """Ready sites / sites with a known status; None when there is no such site."""
    ready = known = 0
    for row in sites:
        if row.known:
            known += row.sites
            ready += row.sites if row.ready else 0
    return ready / known if known else None


def sites_of(records: Optional[Iterable[Mapping[str, Any]]]) -> tuple[ApiSites, ...]:
    """The tally of a repository's record in ``run.json`` (none in records older than the audit)."""
    return tuple(ApiSites.from_dict(record) for record in records or ())
