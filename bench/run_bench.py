"""npu-codemod benchmark: one run, every measure side by side with its floor.

    python bench/run_bench.py            # full corpora (20,000-file monorepo, 200 repos, 500
                                         # TF-only scripts, 150 real-code-shaped files)
    python bench/run_bench.py --quick    # smaller corpora, a smoke test of the numbers
    python bench/run_bench.py --corpus DIR   # any folder of git repositories (or one): the
                                         # rewrite rows and scan --jobs 1 end to end

Corpora are generated (seeded) under ``bench/corpora/`` and reused while the parameters match.
Prints a table and writes ``bench/results.json``. Timings are wall-clock seconds on this
machine, the rewrite rows CPU seconds; only the ratios are meant to compare across machines.
The rewrite rows run both engine modes (``--engine selective|full``) with the default rules
and with every pack, on the TF-only corpus and on the real-code-shaped one (long files, few
sites: ``real_code.py``), against a bare fissix parse of the same files. Without TensorFlow
the verify stage is skipped (one line says so) and everything else runs.
"""

from __future__ import annotations

import argparse
import functools
import gc
import inspect
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import replace
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "tests"))  # support.trees: how two parsers' answers compare

from fissix import pygram, pytree  # noqa: E402
from fissix.pgen2 import driver  # noqa: E402

from npu_codemod.codemods.engine import DEFAULT_MODE, MODES  # noqa: E402
from npu_codemod.codemods.modules import module_ast  # noqa: E402
from npu_codemod.codemods.names import IMPORTS_TF  # noqa: E402
from npu_codemod.codemods.parser import Parser  # noqa: E402
from npu_codemod.codemods.source import decode_source  # noqa: E402
from npu_codemod.orchestrator.batch.jobs import RepoJob  # noqa: E402
from npu_codemod.orchestrator.batch.pipeline import process_repo  # noqa: E402
from npu_codemod.orchestrator.demo import build_sample_repos  # noqa: E402
from npu_codemod.orchestrator.git import repository as gitrepo  # noqa: E402
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules  # noqa: E402
from npu_codemod.orchestrator.repolist import parse_repo_list  # noqa: E402
from npu_codemod.orchestrator.verify.verify_options import tensorflow_problem  # noqa: E402
from npu_codemod.plugins.packs import DEFAULT, PACKS  # noqa: E402

from corpus import SIZES, Corpora, build_corpora  # noqa: E402
from rss import PeakRss  # noqa: E402
from support.trees import parse_outcome  # type: ignore[import-not-found]  # noqa: E402

#: What the issue asks for (ratios measured in one run on a 2-core machine).
TARGETS = {
    "rewrite_vs_parse": 0.75,  # engine rate / bare fissix parse rate, at least
    "scan_vs_ideal": 1.5,  # monorepo scan wall / ideal, at most
    "jobs2_speedup": 1.7,  # multi-repo wall --jobs 1 / --jobs 2, at least
    "git_ms_per_repo": 150.0,  # at most
    "peak_rss_mb": 300.0,  # per process, at most
    "audit_overhead": 1.15,  # rewrite CPU with the API audit (NPU100) / without it, at most
    "verify_demo_s": 60.0,  # verify of the demo repositories, 10 steps, --jobs 2, at most
    # issue 20: selective parsing
    "real_code_selective_vs_parse": 0.5,  # real-code corpus: selective CPU / bare parse CPU, at most
    "tf_only_selective_vs_full": 1.05,  # TF-only corpus: selective CPU / full CPU, at most
    "selective_differing_files": 0,  # files where selective and full disagree, at most
    "parser_differing_trees": 0,  # files where the engine's parser and fissix's disagree, at most
}
#: The rule whose cost the audit row isolates.
AUDIT_RULE = "NPU100"
#: Every rule pack, the opt-in ones too: the rewrite measure runs them all.
EVERY_PACK = RuleSelection(only=frozenset({DEFAULT, *(pack.name for pack in PACKS)}))
#: The rule sets of the rewrite rows: a run's default rules, and every pack (distributed too).
RULE_SETS = {"default": RuleSelection(), "all_packs": EVERY_PACK}
#: Interleaved ``--jobs 1`` / ``--jobs 2`` runs over the small repos, per mode.
PAIRS = {"full": 5, "quick": 2, "tiny": 1}
TRIGGER = b"tensorflow"
#: Failures of the CLI runs, reported in results.json and the table instead of aborting.
ERRORS: list[str] = []
#: CPU seconds of each CLI run (orchestrator, workers, git): what a busy machine cannot inflate.
CLI_CPU: dict[str, float] = {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_const", const="quick", dest="mode")
    size.add_argument("--tiny", action="store_const", const="tiny", dest="mode",
                      help="minimal corpora: only proves the script works (used by the tests)")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--corpora", type=Path, default=HERE / "corpora")
    parser.add_argument("--out", type=Path, default=None,
                        help="results file (default: bench/results.json; with --corpus: none)")
    parser.add_argument("--corpus", type=Path, metavar="DIR",
                        help="measure this folder of git repositories (or one repository) only: "
                             "selective, full and bare parse of its TF files, scan --jobs 1 end to end")
    args = parser.parse_args(argv)
    if args.corpus is not None:
        return corpus_main(args.corpus.resolve(), args.out)
    out = args.out or HERE / "results.json"
    mode = args.mode or "full"
    corpora = build_corpora(args.corpora / mode, SIZES[mode], args.seed)
    compile_bytecode(sys.executable)
    with tempfile.TemporaryDirectory(prefix="npu-codemod-bench-") as scratch:
        results = run_all(corpora, Path(scratch), mode, args.seed)
    print_table(results)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {out}")
    return 0


def run_all(corpora: Corpora, scratch: Path, mode: str, seed: int) -> dict[str, Any]:
    memory: dict[str, dict[str, float | None]] = {}
    results: dict[str, Any] = {
        "mode": mode, "seed": seed,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(), "loadavg_start": os.getloadavg()},
        "rewrite": bench_rewrite(corpora),
        "scan": bench_scan(corpora.monorepo, scratch, memory),
        "multi_repo": bench_multi_repo(corpora.small_repos, scratch, memory, PAIRS[mode]),
        "rerun": bench_rerun(corpora.tf_scripts, scratch, memory),
        "repo_count_memory": bench_repo_count_memory(corpora.small_repos, scratch),
        "verify": bench_verify(scratch, mode),
        "memory": memory,
        "cli_cpu_s": CLI_CPU,
        "errors": ERRORS,
    }
    results["machine"]["loadavg_end"] = os.getloadavg()
    results["targets"] = check_targets(results)
    return results


# --- rewrite: the engine in each mode vs bare fissix parsing of the same files ---------------

def bench_rewrite(corpora: Corpora) -> dict[str, Any]:
    """Both corpora, every engine mode and rule set against the bare parse, interleaved per
    file; the TF-only corpus also without the API audit and against a GC-paused parse. The
    top-level keys are the TF-only corpus with every pack in the default engine mode."""
    tf_files, real_files = tf_sources(corpora.tf_scripts), tf_sources(corpora.real_code)
    loaded_rule_sets = {(name, mode): load_rules(replace(selection, engine=mode))
                for name, selection in RULE_SETS.items() for mode in MODES}
    no_audit = load_rules(RuleSelection(only=EVERY_PACK.only, disabled=frozenset({AUDIT_RULE})))
    tf_totals, tf_outcomes = measure_interleaved(tf_files, {
        **rewrite_sides(loaded_rule_sets, tf_files, "tf"),
        "parse_gc_paused": lambda data, path, text: parse_paused(text) and None,
        "no_audit": engine_side(no_audit, tf_files, "tf")})
    real_totals, real_outcomes = measure_interleaved(real_files, rewrite_sides(loaded_rule_sets, real_files,
                                                                                "real"))
    return {**rewrite_summary(tf_files, tf_totals, tf_outcomes, loaded_rule_sets),
            "tf_only": rewrite_rows(tf_files, tf_totals, tf_outcomes),
            "real_code": rewrite_rows(real_files, real_totals, real_outcomes)}


def tf_sources(repo: Path) -> list[tuple[str, bytes, str]]:
    """(path, bytes, text) of the files of ``repo`` that import TensorFlow: what both the
    engine and the bare parse get (the rest is never parsed)."""
    files = [(path, data, decode_source(data).text) for path, data in read_all(repo)]
    return [(path, data, text) for path, data, text in files if IMPORTS_TF.search(text)]


Side = Callable[[bytes, str, str], Any]


def engine_side(loaded_rules, files: list[tuple[str, bytes, str]], repo: str) -> Side:
    """The engine of ``loaded_rules`` on one file, with the repository's facts (gathered untimed)."""
    facts = loaded_rules.repository_facts((path, data) for path, data, _ in files).facts
    return lambda data, path, text: loaded_rules.engine.process(data, path, repo=repo, facts=facts)


def rewrite_sides(loaded_rule_sets: dict, files: list[tuple[str, bytes, str]], repo: str) -> dict[str, Side]:
    sides: dict[str, Side] = {"parse": lambda data, path, text: parse(text) and None,
                              "engine_parser": lambda data, path, text: engine_parse(text) and None}
    sides.update({f"{name}.{mode}": engine_side(loaded_rules, files, repo)
                  for (name, mode), loaded_rules in loaded_rule_sets.items()})
    return sides


def measure_interleaved(files: list[tuple[str, bytes, str]], sides: dict[str, Side]
                        ) -> tuple[dict[str, tuple[float, float]], dict[str, list]]:
    """Wall and CPU seconds of each side over ``files`` (each file by every side in turn, so
    a busy machine slows every side alike), and what each side returned per file. Every side
    runs once on the first file untimed: what it builds lazily on its first file (compiled
    patterns, rule state) is not charged to whichever side happens to come first; and the
    shared cache of a file's ``ast`` is emptied before each side, or the first side would
    parse it for the others; each side pays for collecting its own garbage (``_own_cost``),
    not that of the side before it."""
    totals = {name: (0.0, 0.0) for name in sides}
    outputs: dict[str, list] = {name: [] for name in sides}
    for path, data, text in files[:1]:
        for side in sides.values():
            side(data, path, text)
    for path, data, text in files:
        for name, side in sides.items():
            module_ast.cache_clear()  # each side parses the file's ast itself, as a run would
            wall, cpu = _own_cost(outputs[name], side, data, path, text)
            totals[name] = (totals[name][0] + wall, totals[name][1] + cpu)
    return totals, outputs


def _own_cost(out: list, side: Side, data: bytes, path: str, text: str) -> tuple[float, float]:
    """Wall and CPU seconds of one side on one file, collecting its own garbage and nobody
    else's: a fissix tree has cycles, so it is freed only by the collector, which a run pays
    once per file (the engine pauses it while it works; a bare parse runs with it). Measured:
    a clean start, then the side followed by a full collection, less the same collection
    with nothing left to free. On a busy machine the idle collection can take longer than a
    tiny side with its own: the difference is then no cost at all (0), never a negative one."""
    gc.collect()
    wall, cpu = measure(_call_into, out, side, data, path, text)
    idle_wall, idle_cpu = measure(gc.collect)
    return max(0.0, wall - idle_wall), max(0.0, cpu - idle_cpu)


def _call_into(out: list, side: Side, data: bytes, path: str, text: str) -> None:
    out.append(side(data, path, text))
    gc.collect()


def rewrite_rows(files: list[tuple[str, bytes, str]], totals: dict[str, tuple[float, float]],
                 outcomes: dict[str, list], rule_sets: Sequence[str] = tuple(RULE_SETS)) -> dict[str, Any]:
    """Per rule set: selective, full and bare-parse CPU seconds, their ratios, and whether
    both modes gave the same bytes and findings on every file."""
    parse_cpu, parser_cpu = totals["parse"][1], totals["engine_parser"][1]
    differing_trees = [path for path, _, text in files if not same_tree(text)]
    rows: dict[str, Any] = {"files": len(files), "lines": sum(text.count("\n") for _, _, text in files),
                            "bytes": sum(len(data) for _, data, _ in files),
                            # The engine's parser (codemods/parser.py) against fissix's driver.
                            "engine_parser_s": parser_cpu, "parser_speedup": parse_cpu / parser_cpu,
                            "parser_differing_trees": len(differing_trees),
                            "parser_differing_paths": differing_trees[:5]}
    for name in rule_sets:
        selective, full = totals[f"{name}.selective"][1], totals[f"{name}.full"][1]
        differing = [outcome.path for outcome, reference
                     in zip(outcomes[f"{name}.selective"], outcomes[f"{name}.full"])
                     if outcome != reference]
        reference = outcomes[f"{name}.full"]
        rows[name] = {
            "selective_s": selective, "full_s": full, "bare_parse_s": parse_cpu,
            "selective_vs_parse": selective / parse_cpu, "full_vs_parse": full / parse_cpu,
            "selective_vs_full": selective / full,
            # Against the engine's own parser: what the rules, analyses and checks cost on top.
            "selective_vs_engine_parser": selective / parser_cpu,
            "identical": not differing, "differing_files": len(differing),
            "differing_paths": differing[:5],
            "files_changed": sum(o.new_data is not None for o in reference),
            "findings": sum(len(o.findings) for o in reference),
        }
    return with_default_flat(rows)


def with_default_flat(rows: dict[str, Any]) -> dict[str, Any]:
    """``rows`` with the default rule set's figures also at the corpus level
    (``rewrite.real_code.selective_s``): the rule set a run has when none is named."""
    keys = ("selective_s", "full_s", "bare_parse_s", "selective_vs_parse", "full_vs_parse",
            "selective_vs_full", "identical")
    return {**rows, "rule_set": "default", **{key: rows["default"][key] for key in keys}}


def rewrite_summary(files: list[tuple[str, bytes, str]], totals: dict[str, tuple[float, float]],
                    outcomes: dict[str, list], loaded_rule_sets: dict) -> dict[str, Any]:
    """The TF-only corpus with every pack, in the default engine mode: the issue-17 ratio."""
    key = f"all_packs.{DEFAULT_MODE}"
    (parse_s, parse_cpu), (engine_s, engine_cpu) = totals["parse"], totals[key]
    paused_cpu, no_audit_cpu = totals["parse_gc_paused"][1], totals["no_audit"][1]
    by_rule = Counter(f"{f.rule_id} {f.status}" for o in outcomes[key] for f in o.findings)
    return {
        "files": len(files), "bytes": sum(len(data) for _, data, _ in files),
        "engine_mode": DEFAULT_MODE, "rules": [rule.id for rule in loaded_rule_sets["all_packs", DEFAULT_MODE].rules],
        "parse_s": parse_s, "engine_s": engine_s, "parse_cpu_s": parse_cpu, "engine_cpu_s": engine_cpu,
        "parse_files_per_s": len(files) / parse_s, "engine_files_per_s": len(files) / engine_s,
        "ratio": parse_cpu / engine_cpu, "ratio_wall": parse_s / engine_s,
        # The engine pauses the garbage collector per file, which bare parsing does not:
        # against a parse that does too, the ratio is the rules' own cost.
        "parse_gc_paused_cpu_s": paused_cpu, "ratio_gc_paused_parse": paused_cpu / engine_cpu,
        # Against the engine's own parser (same trees, faster than fissix's driver): the rules',
        # analyses' and checks' share of a file's cost.
        "engine_parser_cpu_s": totals["engine_parser"][1],
        "ratio_engine_parser": totals["engine_parser"][1] / engine_cpu,
        # The same rewrite without the API audit: what NPU100 adds to a file's cost.
        "engine_no_audit_cpu_s": no_audit_cpu, "audit_ratio": engine_cpu / no_audit_cpu,
        "files_changed": sum(o.new_data is not None for o in outcomes[key]),
        "findings": dict(sorted(by_rule.items())),
    }


_DRIVER = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
_PARSER = Parser(pygram.python_grammar_no_print_and_exec_statement)


def parse(text: str) -> pytree.Node:
    """The baseline: fissix's own driver."""
    return _DRIVER.parse_string(text if text.endswith("\n") else text + "\n")


def engine_parse(text: str) -> pytree.Node:
    """The engine's parser (``codemods/parser.py``), which gives fissix's tree faster."""
    return _PARSER.parse_string(text if text.endswith("\n") else text + "\n")


def same_tree(text: str) -> bool:
    """Whether both parsers give ``text`` the same tree (node classes, every attribute, parent
    links, ``used_names``) or the same error: as ``tests/test_parser.py`` compares them."""
    return parse_outcome(parse, text) == parse_outcome(engine_parse, text)


def parse_paused(text: str) -> pytree.Node:
    """:func:`parse` with the garbage collector off, as the engine runs a file."""
    gc.disable()
    try:
        return parse(text)
    finally:
        gc.enable()


# --- any folder of repositories: the rewrite rows and the whole scan, side by side ---------

def corpus_main(folder: Path, out: Path | None) -> int:
    repos = corpus_repos(folder)
    if not repos:
        raise SystemExit(f"bench: no git repository in {folder}")
    compile_bytecode(sys.executable)
    with tempfile.TemporaryDirectory(prefix="npu-codemod-bench-") as scratch:
        results = bench_corpus(repos, Path(scratch))
    print_corpus_table(results)
    for error in results["errors"]:
        print(f"FAILED: {error}")
    if out is not None:
        out.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nwrote {out}")
    return 0


#: The packages whose bytecode :func:`compile_bytecode` writes (those ``npu_codemod`` maps).
PACKAGES = ("npu_codemod", "npu_codemod.codemods", "npu_codemod.plugins", "npu_codemod.orchestrator",
            "npu_codemod.reports")


def compile_bytecode(python: str) -> None:
    """Write the bytecode of the npu-codemod ``python`` runs, as the README's install does
    (``compileall``): a scan measured without it also counts the compiler, in every process
    (under ``PYTHONDONTWRITEBYTECODE`` or in a read-only checkout, where Python writes none):
    4.9 G instructions more on the twelve repositories of the thirteenth round, 12%."""
    code = ("import compileall, importlib\n"
            f"for name in {PACKAGES!r}:\n"
            "    for path in importlib.import_module(name).__path__:\n"
            "        compileall.compile_dir(path, quiet=2)\n")
    try:
        subprocess.run([python, "-c", code], capture_output=True, check=False)
    except OSError:
        pass  # no such interpreter: the measurement that runs it says so, in one line


def corpus_repos(folder: Path) -> list[Path]:
    """``folder`` if it is a git repository, else the repositories directly in it."""
    if _is_repo(folder):
        return [folder]
    return sorted(path for path in folder.iterdir() if path.is_dir() and _is_repo(path))


def _is_repo(path: Path) -> bool:
    return subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=path,
                          capture_output=True).returncode == 0 and (path / ".git").exists()


def bench_corpus(repos: list[Path], scratch: Path) -> dict[str, Any]:
    """The rewrite rows over the TF files of ``repos`` (each repository with its own facts),
    their analysis CPU, and ``scan --jobs 1 --no-cache`` of them all against the bare fissix
    parse of the same TF files, measured in this run (the scan first, then the rest)."""
    memory: dict[str, dict[str, float | None]] = {}
    load_start = os.getloadavg()
    start_cpu = cli_startup_cpu()
    label = "scan corpus --jobs 1"
    scan_wall = cli(scratch, "scan", repos, 1, memory, label)
    scan_cpu = CLI_CPU[label]
    loaded_rule_sets = {("default", mode): load_rules(replace(RULE_SETS["default"], engine=mode))
                for mode in MODES}  # what scan runs (every pack: the bench's own corpora)
    files: list[tuple[str, bytes, str]] = []
    totals: dict[str, tuple[float, float]] = {}
    outcomes: dict[str, list] = {}
    analysis_cpu = 0.0
    for repo in repos:
        repo_files = [(f"{repo.name}/{path}", data, text) for path, data, text in tf_sources(repo)]
        if not repo_files:
            continue
        analysis_cpu += analysis_cost(loaded_rule_sets["default", DEFAULT_MODE], repo_files)
        repo_totals, repo_outcomes = measure_interleaved(repo_files, rewrite_sides(loaded_rule_sets, repo_files,
                                                                                   repo.name))
        files += repo_files
        for name, (wall, cpu) in repo_totals.items():
            totals[name] = (totals.get(name, (0.0, 0.0))[0] + wall, totals.get(name, (0.0, 0.0))[1] + cpu)
            outcomes.setdefault(name, []).extend(repo_outcomes[name])
    rows = rewrite_rows(files, totals, outcomes, ("default",))
    return {
        "repos": [repo.name for repo in repos], "machine": {
            "cpus": os.cpu_count(), "python": platform.python_version(),
            "loadavg_start": load_start, "loadavg_end": os.getloadavg()},
        "rewrite": rows, "analysis_cpu_s": analysis_cpu,
        "scan": {"jobs1_s": scan_wall, "cpu_s": scan_cpu, "startup_cpu_s": start_cpu,
                 "bare_parse_cpu_s": rows["bare_parse_s"], "scan_vs_parse": scan_cpu / rows["bare_parse_s"],
                 "worker_mb": memory[label]["worker_mb"], "orchestrator_mb": memory[label]["orchestrator_mb"]},
        "errors": ERRORS,
    }


def analysis_cost(loaded_rules, files: list[tuple[str, bytes, str]]) -> float:
    """CPU seconds of the repository analysis of ``files`` (each file's ``ast`` included)."""
    module_ast.cache_clear()
    gc.collect()
    cpu = measure(lambda: loaded_rules.repository_facts((path, data) for path, data, _ in files))[1]
    module_ast.cache_clear()
    return cpu


def cli_startup_cpu() -> float:
    """CPU seconds of starting the CLI (``--help``): interpreter, imports, no repository."""
    cpu = _cpu()
    subprocess.run([sys.executable, "-m", "npu_codemod", "scan", "--help"], capture_output=True, check=True)
    return _cpu() - cpu


def print_corpus_table(results: dict[str, Any]) -> None:
    rw, scan = results["rewrite"], results["scan"]
    rows = rewrite_table_rows({"corpus": rw}, ("corpus",), ("default",))
    rows += [
        ("analysis (repository facts)", f"{rw['files']} files", f"CPU {results['analysis_cpu_s']:.2f} s",
         "the rules' npu_codemod_analyze_file over the TF files, ast included"),
        ("scan --jobs 1 --no-cache", f"{len(results['repos'])} repos",
         f"CPU {scan['cpu_s']:.2f} s (wall {scan['jobs1_s']:.2f} s)",
         f"bare fissix parse of the TF files {scan['bare_parse_cpu_s']:.2f} s: {scan['scan_vs_parse']:.2f}x; "
         f"CLI start-up {scan['startup_cpu_s']:.2f} s; worker peak {_mb(scan['worker_mb'])}"),
    ]
    _print_rows(("measure", "corpus", "npu-codemod", "floor / detail"), rows)
    print("load average: start {:.2f}, end {:.2f}".format(results["machine"]["loadavg_start"][0],
                                                        results["machine"]["loadavg_end"][0]))


# --- scan: the monorepo vs reading every file, git grep, and parsing its TF files -----------

def bench_scan(repo: Path, scratch: Path, memory: dict) -> dict[str, Any]:
    files: list[tuple[str, bytes]] = []
    read_s = timed(lambda: files.extend(read_all(repo)))
    tf_files: list[str] = []
    prefilter_s = timed(lambda: tf_files.extend(
        text for text in (decode_source(data).text for _, data in files if TRIGGER in data)
        if IMPORTS_TF.search(text)))
    grep_s = timed(lambda: git(repo, "grep", "-l", "-z", "-e", TRIGGER.decode(), "HEAD", "--", "*.py"))
    parse_s = timed(lambda: [parse(text) for text in tf_files])
    ideal = read_s + prefilter_s + parse_s / 2
    # The same ideal with the engine's parser (same trees, faster): a stricter floor.
    engine_parse_s = timed(lambda: [engine_parse(text) for text in tf_files])
    ideal_engine = read_s + prefilter_s + engine_parse_s / 2
    wall = cli(scratch, "scan", [repo], 2, memory, "scan monorepo --jobs 2")
    return {
        "files": len(files), "bytes": sum(len(d) for _, d in files), "tf_files": len(tf_files),
        "read_all_s": read_s, "prefilter_s": prefilter_s, "git_grep_s": grep_s,
        "parse_tf_s": parse_s, "ideal_jobs2_s": ideal, "scan_jobs2_s": wall,
        "baseline_files_per_s": len(files) / (read_s + grep_s), "scan_files_per_s": len(files) / wall,
        "ratio_to_ideal": wall / ideal,
        "parse_tf_engine_parser_s": engine_parse_s, "ideal_engine_parser_jobs2_s": ideal_engine,
        "ratio_to_ideal_engine_parser": wall / ideal_engine,
    }


# --- many small repos: scaling over workers, and the git cost of each repo ------------------

def bench_multi_repo(repos: list[Path], scratch: Path, memory: dict, pairs: int) -> dict[str, Any]:
    """``--jobs 1`` then ``--jobs 2``, ``pairs`` times: a busy moment of the machine then
    skews one pair, and the median pair's speed-up is the verdict (every pair is kept).
    Each pair also runs ``--jobs 2 --engine full``: the two engines side by side."""
    walls: list[Any] = []
    engine_walls: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(pairs):
        jobs1 = cli(scratch, "run", repos, 1, memory, f"run repos --jobs 1 --engine {DEFAULT_MODE}",
                    engine=DEFAULT_MODE)
        for mode in sorted(MODES, key=lambda m: m != DEFAULT_MODE):  # the default mode first
            engine_walls[mode].append(cli(scratch, "run", repos, 2, memory,
                                          f"run repos --jobs 2 --engine {mode}", engine=mode))
        walls.append((jobs1, engine_walls[DEFAULT_MODE][-1]))
    speedups = [jobs1 / jobs2 for jobs1, jobs2 in walls]
    jobs1, jobs2 = walls[speedups.index(statistics.median_low(speedups))]
    git_s, per_function, total_s = git_time_in_process(repos, scratch)
    return {
        "repos": len(repos), "jobs1_s": jobs1, "jobs2_s": jobs2, "speedup": jobs1 / jobs2,
        "pairs": [{"jobs1_s": a, "jobs2_s": b, "speedup": a / b} for a, b in walls],
        # run --jobs 2 per --engine (median over the pairs) and its workers' peak RSS
        "engine_jobs2_s": {mode: statistics.median(engine_walls[mode]) for mode in MODES},
        "engine_worker_mb": {mode: memory[f"run repos --jobs 2 --engine {mode}"]["worker_mb"]
                             for mode in MODES},
        "in_process_s": total_s, "git_ms_per_repo": 1000 * git_s / len(repos),
        "git_ms_per_repo_by_function": {name: 1000 * s / len(repos) for name, s in per_function.items()},
    }


def git_time_in_process(repos: list[Path], scratch: Path) -> tuple[float, dict[str, float], float]:
    """Run every repo serially here, timing each ``gitrepo`` function (outermost calls only)."""
    branch = "npu-codemod-bench/in-process"
    drop_branch(repos, branch)
    entries = repo_entries(repos, scratch)
    with timed_module(gitrepo) as spent:
        start = time.perf_counter()
        workspace = str(scratch / "ws")
        results = [process_repo(RepoJob(entry=entry, mode="run", branch=branch, workspace=workspace,
                                        cache=False))
                   for entry in entries]
        total = time.perf_counter() - start
    check_results(results, "in-process run")
    return sum(spent.values()), dict(sorted(spent.items())), total


@contextmanager
def timed_module(module) -> Iterator[Counter]:
    """Patch every function of ``module`` to add its own wall time to a counter."""
    spent: Counter = Counter()
    depth = [0]
    originals = {name: value for name, value in vars(module).items()
                 if inspect.isfunction(value) and value.__module__ == module.__name__}
    for name, function in originals.items():
        setattr(module, name, _timed_function(name, function, spent, depth))
    try:
        yield spent
    finally:
        for name, function in originals.items():
            setattr(module, name, function)


def _timed_function(name, function, spent: Counter, depth: list[int]):
    @contextmanager
    def clock():
        depth[0] += 1
        start = time.perf_counter()
        try:
            yield
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                spent[name] += time.perf_counter() - start

    if inspect.isgeneratorfunction(function):
        @functools.wraps(function)
        def generator(*args, **kwargs):
            inner = function(*args, **kwargs)
            while True:
                with clock():
                    item = next(inner, clock)
                if item is clock:
                    return
                yield item
        return generator

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with clock():
            return function(*args, **kwargs)
    return wrapper


# --- a rerun: unchanged files come from the result cache ------------------------------------

def bench_rerun(repo: Path, scratch: Path, memory: dict) -> dict[str, Any]:
    """``run`` over the TF-only corpus twice with the result cache, from an empty one."""
    shutil.rmtree(scratch / "ws" / "cache", ignore_errors=True)
    cold = cli(scratch, "run", [repo], 2, memory, "rerun TF-only cold", cache=True)
    warm = cli(scratch, "run", [repo], 2, memory, "rerun TF-only warm", cache=True)
    record = json.loads((scratch / "report-run-2" / "run.json").read_text())
    return {"files_cached": sum(r["files_cached"] for r in record["repos"]),
            "cold_s": cold, "warm_s": warm, "speedup": cold / warm}


# --- memory over the number of repos: the orchestrator's must not grow with it --------------

def bench_repo_count_memory(repos: list[Path], scratch: Path) -> dict[str, Any]:
    """Peak orchestrator RSS of ``scan --jobs 2`` over the small repos and over five times as
    many (distinct clones sharing their objects); the slope is what each further repo costs."""
    many = list(repos)
    for copy in range(1, 5):
        for repo in repos:
            clone = scratch / "copies" / f"{repo.name}-{copy}"
            if not clone.exists():
                subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(clone)], check=True)
            many.append(clone)
    peaks: list[float] = []
    for group in (repos, many):
        label = f"scan {len(group)} repos --jobs 2"
        memory: dict[str, dict[str, float | None]] = {}
        cli(scratch, "scan", group, 2, memory, label)
        peak = memory[label]["orchestrator_mb"]
        if peak is None:
            raise SystemExit(f"bench: {label}: the orchestrator's memory was never sampled")
        peaks.append(peak)
    return {"repos": [len(repos), len(many)], "orchestrator_mb": peaks,
            "mb_per_1000_repos": 1000 * (peaks[1] - peaks[0]) / (len(many) - len(repos))}


# --- verify: the demo repositories before and after, vs TensorFlow's import ---------------

def bench_verify(scratch: Path, mode: str) -> dict[str, Any]:
    """``verify --jobs 2`` of the demo repositories (migrated first, untimed), 10 steps; the
    floor is TensorFlow's import in each run (two per repository that trains) over 2 cores.
    ``--tiny``: one repository, 2 steps. Without TensorFlow: skipped, with one line saying so."""
    skipped = verify_skipped()
    if skipped:
        print(skipped)
        return {"skipped": skipped}
    repo_list = build_sample_repos(scratch / "verify-demo")
    if mode == "tiny":
        repo_list.write_text('dqn-agent verify="python train.py"\n')
    steps = "2" if mode == "tiny" else "10"
    common = ["--repos", str(repo_list), "--no-progress", "--workspace", str(scratch / "verify-ws")]
    run_cli(["run", *common, "--report-dir", str(scratch / "verify-run")], "migrate demo")
    report = scratch / "verify-report"
    start, cpu = time.perf_counter(), _cpu()
    run_cli(["verify", *common, "--jobs", "2", "--verify-steps", steps, "--report-dir", str(report)],
            "verify demo", ok=(0, 1))
    wall, cpu = time.perf_counter() - start, _cpu() - cpu
    records = [repo["verify"] for repo in json.loads((report / "run.json").read_text())["repos"]]
    runs = sum(1 + (r["verdict"] not in ("inconclusive", "timeout")) for r in records if r["original_s"])
    imports = [tensorflow_import_s() for _ in range(1 if mode == "tiny" else 3)]
    tf_import = statistics.median(imports)
    return {"repos": len(records), "steps": int(steps), "runs": runs, "verify_jobs2_s": wall,
            "cpu_s": cpu, "tf_import_s": tf_import, "tf_import_all_s": imports,
            "floor_s": runs * tf_import / 2, "verdicts": {r["verdict"]: 0 for r in records} | dict(
                Counter(r["verdict"] for r in records)),
            "run_s": [[r["original_s"], r["migrated_s"]] for r in records if r["original_s"]]}


def verify_skipped() -> str | None:
    """Why this interpreter cannot run the verify bench, or None."""
    problem = tensorflow_problem()
    if problem is None:
        return None
    if find_spec("tensorflow") is None:
        return "verify bench skipped: TensorFlow is not installed (pip install -e '.[verify]')"
    return f"verify bench skipped: {problem}"


def tensorflow_import_s() -> float:
    """Wall seconds of a process that imports TensorFlow (and tf-keras) as a verify run does."""
    env = {**os.environ, "TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "2"}
    code = "import tensorflow as tf; tf.compat.v1.disable_v2_behavior(); tf.compat.v1.layers.Dense"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def run_cli(args: list[str], label: str, ok: tuple[int, ...] = (0,)) -> None:
    done = subprocess.run([sys.executable, "-m", "npu_codemod", *args], capture_output=True, text=True)
    if done.returncode not in ok:
        ERRORS.append(f"{label}: exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")


# --- running the real CLI, with its peak memory ---------------------------------------------

def cli(scratch: Path, command: str, repos: list[Path], jobs: int, memory: dict, label: str,
        cache: bool = False, engine: str | None = None) -> float:
    """Wall time of ``npu-codemod COMMAND`` over ``repos``; records the tree's peak RSS.
    Without the result cache unless asked: every other measure is of real work. ``engine``:
    the ``--engine`` mode (None: the CLI's default)."""
    branch = f"npu-codemod-bench/jobs{jobs}"
    if command == "run":
        drop_branch(repos, branch)
    repo_list = scratch / f"{command}-{jobs}.txt"
    repo_list.write_text("".join(f"{path}\n" for path in repos))
    argv = [sys.executable, "-m", "npu_codemod", command, "--repos", str(repo_list),
            "--jobs", str(jobs), "--no-progress", "--report-dir", str(scratch / f"report-{command}-{jobs}"),
            "--workspace", str(scratch / "ws")] + ([] if cache else ["--no-cache"])
    if command == "run":
        argv += ["--branch", branch]
    if engine is not None:
        argv += ["--engine", engine]
    start, cpu = time.perf_counter(), _cpu()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with PeakRss(process.pid) as rss:
        out, err = process.communicate()
    wall = time.perf_counter() - start
    CLI_CPU[label] = _cpu() - cpu
    memory[label] = {"orchestrator_mb": rss.peak("orchestrator"), "worker_mb": rss.peak("worker"),
                     "git_mb": rss.peak("git")}
    if process.returncode != 0:  # kept, with the time, so one broken step does not lose the run
        ERRORS.append(f"{label}: exit {process.returncode}: {err.decode().strip().splitlines()[-1:]}")
    return wall


def repo_entries(repos: list[Path], scratch: Path):
    return parse_repo_list("".join(f"{path}\n" for path in repos), scratch)


def check_results(results, label: str) -> None:
    failed = [r for r in results if r.status == "failed"]
    if failed:
        raise SystemExit(f"bench: {label}: {failed[0].repo} failed: {failed[0].error}")


def drop_branch(repos: list[Path], branch: str) -> None:
    """Forget a previous bench run's branch, so every run writes its commits afresh."""
    for repo in repos:
        subprocess.run(["git", "update-ref", "-d", f"refs/heads/{branch}"], cwd=repo,
                       check=True, capture_output=True)


# --- reading a repository the cheapest way: the baseline every measure is compared to -------

def read_all(repo: Path) -> list[tuple[str, bytes]]:
    """Every ``.py`` blob at HEAD through one ``git ls-tree`` and one ``git cat-file --batch``."""
    listing = git(repo, "ls-tree", "-r", "-z", "HEAD").split(b"\0")
    entries = [record.split(b"\t", 1) for record in listing if record]
    wanted = [(path.decode(), meta.split()[2]) for meta, path in entries if path.endswith(b".py")]
    out = git(repo, "cat-file", "--batch", stdin=b"".join(sha + b"\n" for _, sha in wanted))
    files, offset = [], 0
    for path, _ in wanted:
        header_end = out.index(b"\n", offset)
        size = int(out[offset:header_end].split()[2])
        files.append((path, out[header_end + 1:header_end + 1 + size]))
        offset = header_end + 2 + size
    return files


def git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, input=stdin, capture_output=True,
                          check=True).stdout


def timed(action) -> float:
    return measure(action)[0]


def measure(action: Callable[..., object], *args: Any) -> tuple[float, float]:
    """Wall and CPU seconds of ``action(*args)`` (CPU: this process and the subprocesses it
    waited for)."""
    wall, cpu = time.perf_counter(), _cpu()
    action(*args)
    return time.perf_counter() - wall, _cpu() - cpu


def _cpu() -> float:
    mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


# --- verdicts and the table -----------------------------------------------------------------

def check_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each measure against its target; a measure that was skipped (verify without
    TensorFlow) has no verdict."""
    peak = max(mb for run in results["memory"].values()
               for key, mb in run.items() if key != "git_mb" and mb is not None)
    rw = results["rewrite"]
    checks = [
        ("rewrite: engine rate / fissix parse rate (TF-only, every pack)", rw["ratio"], ">=",
         "rewrite_vs_parse"),
        ("rewrite real_code.default: selective / bare parse CPU",
         rw["real_code"]["default"]["selective_vs_parse"], "<=", "real_code_selective_vs_parse"),
        *((f"rewrite tf_only.{name}: selective / full CPU", rw["tf_only"][name]["selective_vs_full"],
           "<=", "tf_only_selective_vs_full") for name in RULE_SETS),
        ("rewrite: files where selective != full (both corpora, rule sets)",
         sum(rw[corpus][name]["differing_files"] for corpus in ("tf_only", "real_code")
             for name in RULE_SETS), "<=", "selective_differing_files"),
        ("rewrite: files where the engine's parser != fissix's (both corpora)",
         sum(rw[corpus]["parser_differing_trees"] for corpus in ("tf_only", "real_code")), "<=",
         "parser_differing_trees"),
        ("scan monorepo --jobs 2: wall / ideal", results["scan"]["ratio_to_ideal"], "<=", "scan_vs_ideal"),
        ("repos: --jobs 1 / --jobs 2 wall", results["multi_repo"]["speedup"], ">=", "jobs2_speedup"),
        ("repos: git ms per repo", results["multi_repo"]["git_ms_per_repo"], "<=", "git_ms_per_repo"),
        ("peak RSS of any process, MB", peak, "<=", "peak_rss_mb"),
        ("rewrite: CPU with the API audit / without", rw["audit_ratio"], "<=", "audit_overhead"),
        ("verify demo repos, 10 steps, --jobs 2: wall s", results["verify"].get("verify_jobs2_s"),
         "<=", "verify_demo_s"),
    ]
    return [{"name": name, "value": round(value, 3), "op": op, "target": TARGETS[key],
             "met": value >= TARGETS[key] if op == ">=" else value <= TARGETS[key]}
            for name, value, op, key in checks if value is not None]


def print_table(results: dict[str, Any]) -> None:
    rows = [*rewrite_table_rows(results["rewrite"]), *measure_rows(results),
            *verify_table_rows(results["verify"])]
    rows += [(f"peak RSS: {label}", "", f"orchestrator {mb['orchestrator_mb']:.0f} MB",
              f"worker {_mb(mb['worker_mb'])}, git {_mb(mb['git_mb'])}")
             for label, mb in results["memory"].items()]
    rows += [(f"CPU: {label}", "", f"{cpu:.2f} s", "orchestrator + workers + git")
             for label, cpu in results["cli_cpu_s"].items()]
    _print_rows(("measure", "corpus", "npu-codemod", "floor / detail"), rows)
    print()
    if results["mode"] != "full":
        print(f"(--{results['mode']}: the targets are the issue's for the full corpora; on these smaller "
              "ones a run's fixed start-up and report costs weigh more, so the verdicts are indicative)")
    _print_rows(("target", "value", "want", "met"),
                [(t["name"], f"{t['value']:.2f}", f"{t['op']} {t['target']}", "yes" if t["met"] else "NO")
                 for t in results["targets"]])
    for error in results["errors"]:
        print(f"FAILED: {error}")


def measure_rows(results: dict[str, Any]) -> list[tuple[str, ...]]:
    rw, scan, multi = results["rewrite"], results["scan"], results["multi_repo"]
    return [
        ("rewrite TF-only corpus", f"{rw['files']} files",
         f"engine {rw['engine_files_per_s']:.1f} files/s", f"fissix parse {rw['parse_files_per_s']:.1f} files/s; "
         f"CPU s: engine {rw['engine_cpu_s']:.2f}, parse {rw['parse_cpu_s']:.2f} "
         f"(GC paused {rw['parse_gc_paused_cpu_s']:.2f}: ratio {rw['ratio_gc_paused_parse']:.2f}); "
         f"engine's parser {rw['engine_parser_cpu_s']:.2f}: ratio {rw['ratio_engine_parser']:.2f}"),
        ("rewrite TF-only, API audit on / off", f"{rw['files']} files",
         f"CPU {rw['engine_cpu_s']:.2f} s / {rw['engine_no_audit_cpu_s']:.2f} s",
         f"ratio {rw['audit_ratio']:.3f} ({AUDIT_RULE}'s cost per file, same files interleaved)"),
        ("scan monorepo --jobs 2", f"{scan['files']} files, {scan['tf_files']} TF",
         f"{scan['scan_jobs2_s']:.2f} s ({scan['scan_files_per_s']:.0f} files/s)",
         f"ideal {scan['ideal_jobs2_s']:.2f} s = read {scan['read_all_s']:.2f} + prefilter "
         f"{scan['prefilter_s']:.2f} + parse {scan['parse_tf_s']:.2f}/2 ({scan['ratio_to_ideal']:.2f}x); with "
         f"the engine's parser {scan['ideal_engine_parser_jobs2_s']:.2f} s "
         f"({scan['ratio_to_ideal_engine_parser']:.2f}x); git grep {scan['git_grep_s']:.2f} s"),
        ("run repos --jobs 1 / 2", f"{multi['repos']} repos",
         f"{multi['jobs1_s']:.2f} s / {multi['jobs2_s']:.2f} s (median of "
         + ", ".join(f"{pair['speedup']:.2f}x" for pair in multi["pairs"]) + ")",
         f"git {multi['git_ms_per_repo']:.1f} ms/repo (in-process total {multi['in_process_s']:.2f} s)"),
        ("run repos --jobs 2 by --engine", f"{multi['repos']} repos",
         " / ".join(f"{mode} {multi['engine_jobs2_s'][mode]:.2f} s" for mode in MODES),
         "worker peak RSS " + " / ".join(f"{mode} {_mb(multi['engine_worker_mb'][mode])}"
                                         for mode in MODES)),
        ("rerun TF-only, cache on", f"{results['rerun']['files_cached']} files cached",
         f"cold {results['rerun']['cold_s']:.2f} s / warm {results['rerun']['warm_s']:.2f} s",
         f"{results['rerun']['speedup']:.1f}x faster warm (the branch is rebuilt both times)"),
        ("peak RSS over repo count, scan --jobs 2", "{} / {} repos".format(*results["repo_count_memory"]["repos"]),
         "orchestrator {:.0f} / {:.0f} MB".format(*results["repo_count_memory"]["orchestrator_mb"]),
         f"{results['repo_count_memory']['mb_per_1000_repos']:.1f} MB more per 1,000 repos"),
    ]


def rewrite_table_rows(rw: dict[str, Any], corpora: Sequence[str] = ("tf_only", "real_code"),
                       rule_sets: Sequence[str] = tuple(RULE_SETS)) -> list[tuple[str, ...]]:
    """One row per corpus and rule set: selective and full against the bare parse."""
    rows: list[tuple[str, ...]] = []
    for corpus in corpora:
        for name in rule_sets:
            row = rw[corpus][name]
            same = "identical" if row["identical"] else (
                f"DIFFER in {row['differing_files']} files: {', '.join(row['differing_paths'])}")
            rows.append((f"rewrite {corpus}.{name} (CPU s)",
                         f"{rw[corpus]['files']} files, {rw[corpus]['lines']} lines",
                         f"selective {row['selective_s']:.2f} / full {row['full_s']:.2f}",
                         f"bare parse {row['bare_parse_s']:.2f}: selective {row['selective_vs_parse']:.2f}x, "
                         f"full {row['full_vs_parse']:.2f}x; {same}"))
        trees = ("same trees" if not rw[corpus]["parser_differing_trees"] else
                 f"TREES DIFFER in {rw[corpus]['parser_differing_trees']} files: "
                 + ", ".join(rw[corpus]["parser_differing_paths"]))
        rows.append((f"parse {corpus} (CPU s)", f"{rw[corpus]['files']} files",
                     f"engine's parser {rw[corpus]['engine_parser_s']:.2f}",
                     f"fissix {rw[corpus]['bare_parse_s']:.2f}: "
                     f"{rw[corpus]['parser_speedup']:.2f}x faster; {trees}"))
    return rows


def verify_table_rows(verify: dict[str, Any]) -> list[tuple[str, ...]]:
    if "skipped" in verify:
        return [("verify demo repos --jobs 2", "", "skipped", verify["skipped"])]
    return [("verify demo repos --jobs 2", f"{verify['repos']} repos, {verify['runs']} "
             f"TF runs, {verify['steps']} steps",
             f"{verify['verify_jobs2_s']:.2f} s (CPU {verify['cpu_s']:.2f} s)",
             f"TF import {verify['tf_import_s']:.2f} s per run: floor {verify['floor_s']:.2f} s "
             f"= {verify['runs']} x import / 2 cores")]


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} MB"


def _print_rows(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


if __name__ == "__main__":
    sys.exit(main())
