"""Findings: what a rule saw at one site, as plain records that cross process boundaries."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional

#: A rule reports ``migrated``, ``unmigrated`` or ``error``; the pipeline settles a ``migrated``
#: finding whose site was already in NPU form as ``compliant`` and a site the migration made
#: dead code as ``not-needed`` (``codemods/sites.py``).
Status = Literal["migrated", "compliant", "unmigrated", "not-needed", "error"]
STATUSES: tuple[Status, ...] = ("migrated", "compliant", "unmigrated", "not-needed", "error")

#: Past-tense verbs that open the message of a ``migrated`` finding whose site the rule
#: rewrote, and their imperative: what ``check`` says ``run`` would do there.
REWRITE_VERBS = {
    "added": "add", "changed": "change", "closed": "close", "created": "create", "flipped": "flip",
    "gave": "give", "imported": "import", "inserted": "insert", "moved": "move", "passed": "pass",
    "removed": "remove", "replaced": "replace", "set": "set", "switched": "switch", "wrapped": "wrap",
}
#: A verb of :data:`REWRITE_VERBS` opening the message or a clause after "and" ("... and gave it").
_CLAUSE_VERB = re.compile(rf"(^| and )({'|'.join(REWRITE_VERBS)})\b")

#: Column order of ``findings.csv``; also the order of the required fields of :class:`Finding`.
FINDING_FIELDS = ("repo", "path", "line", "column", "rule_id", "rule_name", "status", "message")


@dataclass(frozen=True, order=True)
class Finding:
    """One site in one file that a rule recognised.

    ``line`` (1-based) and ``column`` (0-based) point into the *original* file, so ``scan``
    and ``run`` name the same places. ``snippet`` is a few numbered lines of the original
    file around a site that needs a person (set by the pipeline; not a CSV column, not part
    of equality); ``trace`` the traceback of a rule that crashed; ``level`` how serious an
    ``unmigrated`` site is for code-scanning tools (SARIF): ``""`` (a warning, the default) or
    ``"note"`` (a site that may need nothing, e.g. an API whose support is not established).
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
    #: The traceback of a rule that crashed (``error`` findings only; not a CSV column).
    trace: str = field(default="", compare=False)
    #: ``""`` or ``"note"``: see above (not a CSV column, not part of equality).
    level: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, Any]:
        # Not dataclasses.asdict: its deep copy is several times slower, and every field is
        # a plain value; the parent builds thousands of these while its workers wait.
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Finding":
        # Positional, in FINDING_FIELDS' order: the reports make one per finding on each pass.
        return cls(data["repo"], data["path"], data["line"], data["column"], data["rule_id"],
                   data["rule_name"], data["status"], data["message"], data.get("snippet", ""),
                   data.get("trace", ""), data.get("level", ""))


#: The verb a rule opens a ``migrated`` message with when it removed a whole statement
#: ("removed hvd.init(): ..."): the site is gone from the branch (see :func:`removed_site`).
REMOVAL_VERB = "removed"


def removed_site(status: str, message: str) -> bool:
    """Did the rewrite of this finding remove its whole statement? Such a site is not in the
    branch, so no rerun over the branch can count it: it is no site of any figure (the
    finding stays, and explains the diff), as NPU001's import line is none."""
    return status == "migrated" and message.startswith(REMOVAL_VERB + " ")


def rewrite_instruction(finding: Finding) -> Optional[str]:
    """What ``run`` does at the site of a ``migrated`` finding, in the imperative ("add
    drop_remainder=True (...)"), or None when the site is already in NPU form.

    A rule says that it rewrote a site by opening the message with a past-tense verb of
    :data:`REWRITE_VERBS` ("added drop_remainder=True"); a message that states a fact
    ("drop_remainder=True is set") is a site that needs nothing.
    """
    if finding.status != "migrated" or not _CLAUSE_VERB.match(finding.message):
        return None
    return _CLAUSE_VERB.sub(lambda verb: verb.group(1) + REWRITE_VERBS[verb.group(2)], finding.message)
