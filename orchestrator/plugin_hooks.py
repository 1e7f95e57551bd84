"""Calling plugin hooks for their side effects, and writing the reports through them."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.orchestrator.batch.progress import write_line
from npu_codemod.orchestrator.errors import UsageError
from npu_codemod.orchestrator.redact import mask_record
from npu_codemod.plugins.manager import Plugins


class HookCaller:
    """Calls a hook on every plugin; a third-party failure is one warning, not the end of a run."""

    def __init__(self, plugins: Plugins) -> None:
        self.plugins = plugins
        self.warned: set[tuple[str, str]] = set()

    def __call__(self, hook: str, **kwargs: object) -> list:
        results, errors = self.plugins.call_each(hook, **kwargs)
        for plugin, reason in errors:
            if (plugin, hook) not in self.warned:
                self.warned.add((plugin, hook))
                write_line(f"npu-codemod: warning: plugin {plugin}: {reason}")
        return [result for _, result in results]


def write_reports(plugins: Plugins, run: dict, report_dir: Path) -> list[Path]:
    """Every report format, from the run record with its secrets masked (the one way in).
    A batch's records were masked as they were spooled; ``mask_record`` passes the spool by."""
    run = mask_record(run)
    make_report_dir(report_dir)
    written: list[Path] = []
    try:
        for paths in HookCaller(plugins)("npu_codemod_write_report", run=run, report_dir=report_dir):
            written.extend(paths or ())
    except OSError as exc:
        raise cannot_write(report_dir, exc) from None
    return written


def make_report_dir(report_dir: Path) -> Path:
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create report dir {str(report_dir)!r}: {exc.strerror}") from None
    return report_dir


def cannot_write(report_dir: Path, exc: OSError) -> UsageError:
    """A full disk, or a folder where a report file goes: one line naming the place."""
    where = exc.filename2 or exc.filename
    return UsageError(f"cannot write reports in {str(report_dir)!r}: {exc.strerror}"
                      + (f": {where}" if where else ""))
