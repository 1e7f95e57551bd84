"""The benchmark script runs end to end (on tiny corpora) and writes the documented results.

Benchmarks are not tests: nothing here looks at a timing, only at the shape of results.json.
"""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "run_bench.py"
sys.path.insert(0, str(BENCH.parent))

import run_bench  # noqa: E402
from code_shape import code_shape  # noqa: E402
from real_code import real_code_files  # noqa: E402

from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules  # noqa: E402

SKIPPED = "verify bench skipped: TensorFlow is not installed (pip install -e '.[verify]')"
ROW_KEYS = {"selective_s", "full_s", "bare_parse_s", "selective_vs_parse", "full_vs_parse",
            "selective_vs_full", "identical", "differing_files", "differing_paths"}


def test_tiny_bench_writes_every_measure(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = subprocess.run([sys.executable, str(BENCH), "--tiny", "--corpora", str(tmp_path / "corpora"),
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    assert results["errors"] == []
    assert results["mode"] == "tiny"
    assert results["rewrite"]["files"] == 4 and results["rewrite"]["parse_s"] > 0
    assert {"ratio", "engine_files_per_s", "findings", "audit_ratio", "ratio_engine_parser"
            } <= set(results["rewrite"])
    assert results["rewrite"]["engine_no_audit_cpu_s"] > 0 and results["rewrite"]["audit_ratio"] > 0
    for corpus, files in (("tf_only", 4), ("real_code", 4)):  # tiny: model, driver, estimator, pipeline
        assert results["rewrite"][corpus]["files"] == files
        top = results["rewrite"][corpus]  # the default rule set's figures, flat
        assert top["rule_set"] == "default" and top["selective_s"] == top["default"]["selective_s"]
        assert {"selective_s", "full_s", "bare_parse_s"} <= set(top)
        assert top["engine_parser_s"] > 0 and top["parser_speedup"] > 0
        assert top["parser_differing_trees"] == 0, top["parser_differing_paths"]
        for rule_set in ("default", "all_packs"):
            row = results["rewrite"][corpus][rule_set]
            assert ROW_KEYS <= set(row) and row["bare_parse_s"] > 0 and row["selective_s"] > 0
            assert row["identical"] is True and row["differing_files"] == 0, row["differing_paths"]
    assert results["rewrite"]["real_code"]["all_packs"]["files_changed"] == 4  # one site each
    assert set(results["multi_repo"]["engine_jobs2_s"]) == {"selective", "full"}
    assert all(mb > 0 for mb in results["multi_repo"]["engine_worker_mb"].values())
    assert {"read_all_s", "git_grep_s", "parse_tf_s", "ideal_jobs2_s", "scan_jobs2_s",
            "ratio_to_ideal", "ratio_to_ideal_engine_parser"} <= set(results["scan"])
    assert results["scan"]["files"] == 40
    assert results["multi_repo"]["repos"] == 3
    assert {"jobs1_s", "jobs2_s", "speedup", "git_ms_per_repo"} <= set(results["multi_repo"])
    assert results["rerun"]["files_cached"] == 4  # the warm run parsed nothing
    assert {"cold_s", "warm_s", "speedup"} <= set(results["rerun"])
    assert all(run["orchestrator_mb"] > 0 for run in results["memory"].values())
    assert results["repo_count_memory"]["repos"] == [3, 15]  # N and 5N distinct repos
    assert all(mb > 0 for mb in results["repo_count_memory"]["orchestrator_mb"])
    verify = results["verify"]
    if find_spec("tensorflow") is None:  # the test venv ('.[test]'): one line, the rest still runs
        assert verify == {"skipped": SKIPPED} and SKIPPED in done.stdout.splitlines()
    else:
        assert verify["repos"] == 1 and verify["runs"] == 2 and verify["verdicts"] == {"equivalent": 1}
        assert verify["tf_import_s"] > 0 and verify["floor_s"] > 0 and verify["verify_jobs2_s"] > 0
    assert [t["name"] for t in results["targets"]] and all(isinstance(t["met"], bool) for t in results["targets"])
    assert "target" in done.stdout and str(out) in done.stdout


def test_verify_bench_without_tensorflow_is_one_line_and_no_target(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(run_bench, "tensorflow_problem", lambda: "verify needs tensorflow ...")
    monkeypatch.setattr(run_bench, "find_spec", lambda name: None)
    assert run_bench.bench_verify(tmp_path, "tiny") == {"skipped": SKIPPED}
    assert capsys.readouterr().out == SKIPPED + "\n"
    assert list(tmp_path.iterdir()) == []  # nothing was built or run
    assert run_bench.verify_table_rows({"skipped": SKIPPED}) == [
        ("verify demo repos --jobs 2", "", "skipped", SKIPPED)]


def test_real_code_corpus_is_files_with_few_sites() -> None:
    """Each kind of file holds the one site it is made for, among code no rule acts on."""
    files = list(real_code_files(12, random.Random(7), max_lines=400))  # short: the engine runs
    for path, text in files:
        ast.parse(text)
        assert 50 <= text.count("\n") <= 4_100, path
    loaded_rules = load_rules(RuleSelection())
    data = [(path, text.encode()) for path, text in files]
    facts = loaded_rules.repository_facts(data).facts
    sites = {path: sorted({f.rule_id for f in loaded_rules.engine.process(blob, path, repo="r", facts=facts).findings})
             for path, blob in data}
    assert sites == {
        "models/model_0000.py": ["NPU001", "NPU004"], "models/model_0005.py": ["NPU001", "NPU004"],
        "benchmarks/driver_0001.py": ["NPU001", "NPU007"],  # a session in `with`: nothing to close
        "benchmarks/driver_0009.py": ["NPU001", "NPU007", "NPU010"],
        "estimator/estimator_0002.py": ["NPU001", "NPU011", "NPU013"],
        # drop_remainder=is_training is reported, not rewritten; a bare batch(...) is rewritten
        "data/pipeline_0003.py": ["NPU002"], "data/pipeline_0010.py": ["NPU001", "NPU002"],
        "utils/summaries_0004.py": [], "utils/metrics_0006.py": [], "utils/checkpoint_0008.py": [],
        "tools/plain_0007.py": [], "tools/plain_0011.py": [],
    }
    assert all("tensorflow" not in text for path, text in files if path.startswith("tools/"))


def test_real_code_corpus_is_shaped_like_real_repositories() -> None:
    """The six real TF 1.x repositories of bench/README.md: median 244 lines, 42% under 200
    lines, 6% of 1,000 or more, 9.6 top-level definitions per file, 76% of their lines in
    definitions that use ``tf``; the corpus within a few points of each."""
    shape = code_shape(real_code_files(200, random.Random(8)))
    assert 200 <= shape["median_lines"] <= 300
    assert 0.32 <= shape["under_200"] <= 0.52 and 0.02 <= shape["at_least_1000"] <= 0.11
    assert 7.5 <= shape["definitions_per_file"] <= 12.5
    assert 0.68 <= shape["tf_definition_lines"] <= 0.82


def test_corpus_bench_measures_a_folder_of_repositories(tmp_path: Path) -> None:
    """``--corpus DIR``: the rewrite rows, the analysis and the whole scan of any repositories,
    each side measured in the same run; a folder that is no repository is left out."""
    from corpus import write_repo

    files = list(real_code_files(4, random.Random(3), max_lines=400))
    write_repo(tmp_path / "repos" / "models", iter(files[:2]))
    write_repo(tmp_path / "repos" / "drivers", iter(files[2:]))
    (tmp_path / "repos" / "notes").mkdir()
    out = tmp_path / "corpus.json"
    done = subprocess.run([sys.executable, str(BENCH), "--corpus", str(tmp_path / "repos"), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    assert results["errors"] == [] and results["repos"] == ["drivers", "models"]
    rows = results["rewrite"]
    assert rows["files"] == 4 and rows["parser_differing_trees"] == 0
    assert ROW_KEYS <= set(rows["default"]) and rows["default"]["identical"] is True
    assert results["analysis_cpu_s"] > 0
    scan = results["scan"]
    assert scan["cpu_s"] > scan["startup_cpu_s"] > 0 and scan["bare_parse_cpu_s"] == rows["bare_parse_s"]
    assert scan["scan_vs_parse"] == scan["cpu_s"] / scan["bare_parse_cpu_s"] and scan["worker_mb"] > 0
    assert "scan --jobs 1 --no-cache" in done.stdout and "load average" in done.stdout
