"""What every command shares: exit codes, the loaded rules with their broken-plugin warnings, and
reading a run record."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from npu_codemod.orchestrator.errors import UsageError

if TYPE_CHECKING:
    from npu_codemod.orchestrator.loaded_rules import LoadedRules, RuleSelection

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def loaded_rules_of(selection: RuleSelection) -> LoadedRules:
    """The rules a command loads; a broken plugin is one warning and the command goes on."""
    from npu_codemod.orchestrator.loaded_rules import load_rules  # the engine: not for --help

    loaded_rules = load_rules(selection)
    for broken in loaded_rules.plugins.broken:
        print(f"npu-codemod: warning: plugin {broken.name} is broken: {broken.reason}",
              file=sys.stderr)
    return loaded_rules


def warn_of_partial_packs(loaded_rules: LoadedRules) -> None:
    """One warning line for each pack whose rules go together that the run takes only part of
    (``--rules default,NPU022``: the NPU's ranks while Horovod still launches the job)."""
    from npu_codemod.plugins.packs import partial_packs

    for warning in partial_packs(loaded_rules.rules, loaded_rules.plugins.rules()):
        print(f"npu-codemod: warning: {warning}", file=sys.stderr)


def read_run(run_json: str) -> dict:
    """The run record at ``run_json`` (``report``, ``status``, ``--only-failed``); a UsageError
    naming the file when it cannot be read or is not a run record."""
    from npu_codemod.reports.json_report import read_run_json

    try:
        return read_run_json(Path(run_json))
    except OSError as exc:
        raise UsageError(f"cannot read {run_json!r}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{run_json}: not a run record (not UTF-8 text)") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
