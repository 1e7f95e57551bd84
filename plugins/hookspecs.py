"""The npu-codemod plugin API: every hook a plugin may implement.

A plugin is any module or object with functions decorated by :data:`hookimpl`::

    from npu_codemod.plugins.hookspecs import hookimpl

    @hookimpl
    def npu_codemod_rules():
        return [MyRule()]

Plugins are found in this order: the built-in ones, packages that declare an entry point in
the ``npu_codemod`` group, then ``--plugin MODULE_OR_PATH`` on the command line. Hooks are
always called with keyword arguments; an implementation may accept any subset of them.
Unless a hook says *first result wins*, the results of all implementations are collected
into a list (``None`` results are dropped).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

import pluggy

if TYPE_CHECKING:
    from npu_codemod.codemods.findings import Finding
    from npu_codemod.codemods.rule import Rule

PROJECT = "npu_codemod"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# --- Rules -----------------------------------------------------------------------------------


@hookspec
def npu_codemod_rules() -> Sequence["Rule"]:
    """Contribute migration rules.

    Return a sequence of :class:`npu_codemod.codemods.rule.Rule` instances. Rule ids must be
    unique across all plugins; a clash is an error naming both plugins. Collected.
    """


@hookspec
def npu_codemod_analyze_file(path: str, text: str) -> Optional[Iterable[str]]:
    """Repository-wide analysis, run on every TensorFlow file of a repo *before* rewriting.

    ``path`` is relative to the repository root and ``text`` is the decoded source. Return
    names of facts that hold for the whole repository (e.g. ``"uses-tf-device"``); the union
    over all files and plugins reaches every rule as ``FileContext.facts``. Must be cheap
    (text only, no parsing) and side-effect free. Collected.
    """


# --- Command line ----------------------------------------------------------------------------


@hookspec
def npu_codemod_add_options(parser: argparse.ArgumentParser, command: str) -> None:
    """Add options to the ``command`` sub-command's parser (``run``, ``scan``, ...).

    Use a prefix of your own for option names. Parsed values reach the other hooks through
    ``options`` where they take it. Collected; return value ignored.
    """


# --- Results ---------------------------------------------------------------------------------


@hookspec
def npu_codemod_repo_result(result: dict, options: argparse.Namespace) -> None:
    """Called in the orchestrating process once per repository when its work is done.

    ``result`` is the repo's result record as a dict (see ``RepoResult.to_dict``: repo, status,
    branch, commit, files changed, error, findings). Use it for notifications or custom
    tracking; do not mutate it. Collected; return value ignored.
    """


@hookspec
def npu_codemod_finding(finding: "Finding") -> None:
    """Called in the orchestrating process once per finding, as repos complete.

    ``finding`` is a frozen :class:`npu_codemod.codemods.findings.Finding`. Collected; return
    value ignored.
    """


# --- Reports ---------------------------------------------------------------------------------


@hookspec
def npu_codemod_write_report(run: dict, report_dir: Path) -> Optional[Sequence[Path]]:
    """Write a report format of your own from a finished run.

    ``run`` is the full run record (the content of ``run.json``); ``report_dir`` exists.
    Return the paths written. Collected; built-in formats (CSV, JSON, HTML, SARIF) are
    implemented through this hook too.
    """


# --- Forges ----------------------------------------------------------------------------------


@hookspec(firstresult=True)
def npu_codemod_forge(name: Optional[str], remote_url: str, api_url: Optional[str], token: Optional[str]):
    """Return a forge client able to open pull requests for ``remote_url``, or None.

    ``name`` is the ``--forge`` choice (None: infer from ``remote_url``), ``api_url`` the
    ``--forge-url`` override and ``token`` the API token. The client must provide the
    interface of ``npu_codemod.orchestrator.forge.Forge``. First result wins, so third
    parties can add Gitea or Bitbucket.
    """
