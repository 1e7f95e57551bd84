"""The npu-codemod plugin API: every hook a plugin may implement.

A plugin is any module or object with functions decorated by :data:`hookimpl`::

    from npu_codemod.plugins.hookspecs import hookimpl

    @hookimpl
    def npu_codemod_rules():
        return [MyRule()]

Plugins are found in this order: the built-in ones, packages that declare an entry point in
the ``npu_codemod`` group, then ``--plugin MODULE_OR_PATH`` on the command line
(``NPU_CODEMOD_DISABLE_ENTRYPOINTS=1`` skips the entry points). Hooks are always called with
keyword arguments; an implementation may accept any subset of them, by name. A ``@hookimpl``
whose name is not one of the hooks below is rejected (``check_pending``): the plugin is
reported broken, not silently ignored.

Unless a hook says *first result wins*, every implementation is called and the results are
collected into a list (``None`` results are dropped). Third-party implementations are called
one by one: one that raises costs its own plugin only (see each hook for how it is reported).

Tutorial: ``docs/writing-rules.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence

import pluggy

if TYPE_CHECKING:
    from npu_codemod.codemods.findings import Finding
    from npu_codemod.codemods.rule import Rule
    from npu_codemod.orchestrator.prs.forge import Forge

PROJECT = "npu_codemod"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# --- Rules -----------------------------------------------------------------------------------


@hookspec
def npu_codemod_rules() -> Sequence["Rule"]:
    """Contribute migration rules. Called once per process. Collected.

    Gets nothing. Returns a sequence of :class:`npu_codemod.codemods.rule.Rule` instances.
    Rule ids must be unique across all plugins: a clash is a usage error naming both plugins.
    Raising, or returning something that is not a Rule, marks the plugin broken.
    """


@hookspec
def npu_codemod_analyze_file(path: str, text: str) -> Optional[Iterable[str]]:
    """Repository-wide analysis, run on every TensorFlow file of a repo *before* rewriting.

    Gets ``path`` (relative to the repository root, ``/``-separated) and ``text`` (the decoded
    source). Returns names of facts that hold for the whole repository (e.g.
    ``"uses-tf-device"``, ``"npu007-config:models.benchmark.create_config_proto"``: name a
    fact after what it says, with the module path when it is about one file's code) or None;
    the union over all files and plugins reaches every rule as ``FileContext.facts`` and is
    part of every file's result-cache key. Must be cheap (text, or the standard library's
    ``ast``; never the rewrite parser) and side-effect free; runs in worker processes.
    Collected. Raising gives an ``error`` finding (rule ``PLUGIN``) on that file.
    """


# --- Command line ----------------------------------------------------------------------------


@hookspec
def npu_codemod_add_options(parser: argparse.ArgumentParser, command: str) -> None:
    """Add options to the parser of one sub-command; called for each of them.

    Gets ``parser`` (the sub-command's ``argparse`` parser) and ``command`` (``run``, ``scan``,
    ``rules``, ``report``, ...). Returns nothing. Use a prefix of your own for option names;
    parsed values reach ``npu_codemod_repo_result`` as ``options``. Called before the command
    line is parsed, so ``--plugin`` modules can add options too. Collected. Raising (e.g. an
    option name that is taken) marks the plugin broken.
    """


# --- Results ---------------------------------------------------------------------------------


@hookspec
def npu_codemod_repo_result(result: Mapping[str, Any], options: argparse.Namespace) -> None:
    """Called in the orchestrating process once per repository when its work is done.

    Gets ``result``, the repo's result record as a dict, as ``run.json`` will hold it (see
    ``RepoResult.to_dict``: repo, status, branch, commit, files changed, error, findings, and
    its pull requests under ``--open-prs``), and ``options``, the parsed command line. Returns nothing; do not mutate ``result``. Use it for notifications or
    custom tracking. Collected. Raising prints one warning; the run goes on.
    """


@hookspec
def npu_codemod_finding(finding: "Finding") -> None:
    """Called in the orchestrating process once per finding, as repos complete.

    Gets ``finding``, a frozen :class:`npu_codemod.codemods.findings.Finding`. Returns
    nothing. Collected. Raising prints one warning; the run goes on.
    """


# --- Reports ---------------------------------------------------------------------------------


@hookspec
def npu_codemod_write_report(run: Mapping[str, Any], report_dir: Path) -> Optional[Sequence[Path]]:
    """Write a report format of your own from a finished run (also by ``npu-codemod report``).

    Gets ``run``, the full run record (the content of ``run.json``: repos, findings, rules,
    plugins), and ``report_dir``, which exists. ``run["repos"]`` is a read-only sequence of
    the repos' records in repo-list order, not a list: ``len()`` it and iterate it, as often
    as you need, but do not keep it whole (``list()``, ``json.dump(run)``): after a batch, each
    pass reads the records one at a time from disk, so that a run over any number of
    repositories fits in memory; write your format as you go. Returns the paths written. Collected; the
    built-in formats are implemented through this hook too. Raising prints one warning; the
    other formats are still written.
    """


# --- Forges ----------------------------------------------------------------------------------


@hookspec(firstresult=True)
def npu_codemod_forge(
    name: Optional[str], remote_url: str, api_url: Optional[str], token: Optional[str], slug: str
) -> Optional["Forge"]:
    """Return a forge client for one repository, to open and update its pull requests; or None.

    Called in the orchestrating process once per repository that has a branch to propose
    (``run --push --open-prs``) and by ``npu-codemod status``. ``name`` is the ``--forge``
    choice, or None: then answer only if ``remote_url`` (the pushed remote, credentials
    included: never show it unmasked) is recognisably yours, e.g. by its host. ``api_url`` is
    the ``--forge-url`` override (None: derive it from the remote), ``token`` the API token
    (None if unset; never print or store it), and ``slug`` the repository's ``owner/name``
    (from the repo list's ``slug=`` or the remote URL's last two path components).

    The client must provide the :class:`npu_codemod.orchestrator.prs.forge.Forge` interface and
    raise :class:`npu_codemod.orchestrator.prs.forge.ForgeError` (one sentence) on refusals; do
    HTTP through :class:`npu_codemod.orchestrator.prs.http.ApiClient` to get retries and
    rate-limit handling. First result wins: built-ins answer to ``github`` and ``gitlab``, so
    third parties can add Gitea or Bitbucket under their own name.
    """
