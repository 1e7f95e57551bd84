"""The benchmark script runs end to end (on tiny corpora) and writes the documented results.

Benchmarks are not tests: nothing here looks at a timing, only at the shape of results.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "run_bench.py"


def test_tiny_bench_writes_every_measure(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = subprocess.run([sys.executable, str(BENCH), "--tiny", "--corpora", str(tmp_path / "corpora"),
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    assert results["errors"] == []
    assert results["mode"] == "tiny"
    assert results["rewrite"]["files"] == 4 and results["rewrite"]["parse_s"] > 0
    assert {"ratio", "engine_files_per_s", "findings"} <= set(results["rewrite"])
    assert {"read_all_s", "git_grep_s", "parse_tf_s", "ideal_jobs2_s", "scan_jobs2_s",
            "ratio_to_ideal"} <= set(results["scan"])
    assert results["scan"]["files"] == 40
    assert results["multi_repo"]["repos"] == 3
    assert {"jobs1_s", "jobs2_s", "speedup", "git_ms_per_repo"} <= set(results["multi_repo"])
    assert results["rerun"]["files_cached"] == 4  # the warm run parsed nothing
    assert {"cold_s", "warm_s", "speedup"} <= set(results["rerun"])
    assert all(run["orchestrator_mb"] > 0 for run in results["memory"].values())
    assert results["repo_count_memory"]["repos"] == [3, 15]  # N and 5N distinct repos
    assert all(mb > 0 for mb in results["repo_count_memory"]["orchestrator_mb"])
    verify = results["verify"]
    assert verify["repos"] == 1 and verify["runs"] == 2 and verify["verdicts"] == {"equivalent": 1}
    assert verify["tf_import_s"] > 0 and verify["floor_s"] > 0 and verify["verify_jobs2_s"] > 0
    assert [t["name"] for t in results["targets"]] and all(isinstance(t["met"], bool) for t in results["targets"])
    assert "target" in done.stdout and str(out) in done.stdout
