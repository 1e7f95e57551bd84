"""NPU100's expected messages and counts, for the audit rule's tests."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from npu_codemod.api._toolkit import support_list
from npu_codemod.codemods.api_owners import OWNERS
from npu_codemod.codemods.findings import Finding
from npu_codemod.testing import engine_of_ids

AUDIT = {"NPU100"}
GUIDE = (" (guide: Ascend's TF 1.15 API support list, "
         "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu100-api-support)")


def deprecated(api: str) -> str:
    return (f"deprecated in TF 1.15: replace {api} with its public TF 1.15 equivalent before "
            f"migrating, or the migration may fail{GUIDE}")


def unsupported(api: str) -> str:
    return f"not supported on Ascend and no migration path: replace {api}{GUIDE}"


def under_analysis(api: str) -> str:
    return f"support on Ascend is not established: test {api} on the NPU{GUIDE}"


def owner_miss(api: str) -> str:
    """The finding at a use whose owning rules were all off: it names them and the opt-in."""
    rules = OWNERS[support_list().lookup(api)[0]].rules
    return (f"Ascend migrates {api}, and npu-codemod's {' or '.join(rules)} does, but it was off "
            f"in this run: turn it on (--rules default,{','.join(rules)}) or migrate it as the "
            f"guide says{GUIDE}")


OPT_IN = "npu-codemod migrates this with `--rules default,distributed`"


def horovod_owner_miss(api: str) -> str:
    """The finding at a Horovod use whose owning rule was off: the distributed pack's Horovod
    rules go together, so it names the pack, not the one rule."""
    rules = OWNERS[support_list().lookup(api)[0]].rules
    return (f"Ascend migrates {api}, and npu-codemod's {' or '.join(rules)} does, but it was off in "
            "this run: turn on the whole distributed pack, whose Horovod rules go together (the "
            "NPU's ranks while Horovod still starts the job would be half a migration), or migrate "
            f"it as the guide says{GUIDE}")


def pack_off(message: str) -> str:
    """A Horovod site's message while the distributed pack is off: it names the opt-in."""
    return message.replace(GUIDE, f"; {OPT_IN}{GUIDE}")


def audit_messages(findings: Iterable[Finding]) -> list[tuple[int, str]]:
    """(line, message) of each NPU100 finding, sorted."""
    return sorted((f.line, f.message) for f in findings if f.rule_id == "NPU100")


def counted(rule_ids: set[str], source: str, path: str = "train.py") -> Counter:
    """(api, status, covered) -> sites, as the file's outcome carries them."""
    outcome = engine_of_ids(frozenset(rule_ids)).process(source.encode(), path)
    return Counter({(row.api, row.status, row.covered): row.sites for row in outcome.api_sites})
