"""The repository analysis in the result cache: a rerun analyses only the files whose analysis
may have changed (their bytes, their path, the analysing code, the rule set), and the facts it
serves give exactly what analysing again gives.

What is analysed is seen by a real third-party plugin (``--plugin``) whose analysis hook logs
each path it is called with: every hook of a file runs in the same analysis, cached or not.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from npu_codemod.orchestrator.batch.analysis_cache import analysis_key, cached_analysis
from npu_codemod.orchestrator.batch.file_cache import open_store
from npu_codemod.orchestrator.loaded_rules import RuleSelection

from support.cli import cli
from support.git import TF_SCRIPT, commit_files, git, make_repo

FILES = {
    "train.py": TF_SCRIPT,
    "model/net.py": "import tensorflow as tf\n\ndef net(x):\n    return tf.nn.dropout(x, 0.5)\n",
    "placement.py": "import tensorflow as tf\nwith tf.device('/cpu:0'):\n    x = tf.constant(1)\n",
    "README.py": "print('no TF here')\n",  # never analysed: the engine does not want it
}
ANALYSED = ["model/net.py", "placement.py", "train.py"]

PLUGIN = '''
from npu_codemod.api import hookimpl


@hookimpl
def npu_codemod_analyze_file(path, text):
    with open(LOG, "a") as log:
        log.write(path + "\\n")
    if "raise here" in text:
        raise ValueError("cannot read " + path)
    return {"watch:" + path + ":" + WORD}
'''


class Scans:
    """``scan`` of one repository with the watching plugin, from ``root``."""

    def __init__(self, root: Path, files: dict[str, str] = FILES) -> None:
        self.root = root
        self.repo = make_repo(root / "a", files)
        (root / "repos.txt").write_text("a\n")
        self.log = root / "analysed.log"
        self.plugin(word="one")

    def plugin(self, word: str) -> None:
        (self.root / "watch.py").write_text(PLUGIN.replace("LOG", repr(str(self.log)))
                                            .replace("WORD", repr(word)))

    def scan(self, *args: str) -> tuple[list[str], dict]:
        """The paths this scan analysed (sorted), and its repository's record."""
        self.log.write_text("")
        cli("scan", "--repos", "repos.txt", "--workspace", "ws", "--report-dir", "report",
            "--no-progress", "--jobs", "1", "--plugin", str(self.root / "watch.py"), *args,
            cwd=self.root, expect=0)
        record = json.loads((self.root / "report" / "run.json").read_text())["repos"][0]
        return sorted(self.log.read_text().split()), record


def outcome(record: dict) -> dict:
    return {key: value for key, value in record.items() if key != "files_cached"}


def rule_ids(record: dict) -> set[str]:
    return {finding["rule_id"] for finding in record["findings"]}


def test_a_rerun_analyses_no_file_and_finds_what_analysing_finds(tmp_path: Path) -> None:
    scans = Scans(tmp_path)
    first, cold = scans.scan()
    second, warm = scans.scan()
    again, uncached = scans.scan("--no-cache")
    assert (first, second, again) == (ANALYSED, [], ANALYSED)
    assert warm["files_cached"] == len(ANALYSED)  # the cached facts key the results as before
    assert outcome(warm) == outcome(cold) == outcome(uncached)
    assert "NPU008" in rule_ids(warm)  # placement.py's tf.device fact, served from the cache


def test_a_changed_file_alone_is_analysed_again(tmp_path: Path) -> None:
    scans = Scans(tmp_path)
    scans.scan()
    commit_files(scans.repo, {"model/net.py": FILES["model/net.py"] + "y = tf.nn.dropout(x, 0.9)\n"},
                 "edit")
    analysed, record = scans.scan()
    assert analysed == ["model/net.py"]
    assert outcome(record) == outcome(scans.scan("--no-cache")[1])


def test_a_moved_file_is_analysed_again_under_its_new_path(tmp_path: Path) -> None:
    """The path is part of a file's facts (its module name, the plugins' facts)."""
    scans = Scans(tmp_path)
    scans.scan()
    git(scans.repo, "mv", "placement.py", "lib_placement.py")
    git(scans.repo, "commit", "-q", "-m", "move")
    analysed, record = scans.scan()
    assert analysed == ["lib_placement.py"]
    assert "watch:lib_placement.py:one" not in json.dumps(record)  # facts are no findings
    assert outcome(record) == outcome(scans.scan("--no-cache")[1])


def test_a_file_that_stops_mentioning_tensorflow_is_no_longer_analysed(tmp_path: Path) -> None:
    scans = Scans(tmp_path)
    scans.scan()
    commit_files(scans.repo, {"placement.py": "x = 1\n"}, "no TF")
    analysed, record = scans.scan()
    assert analysed == []
    assert "NPU008" not in rule_ids(record)  # its cached tf.device fact is not used
    assert outcome(record) == outcome(scans.scan("--no-cache")[1])


def test_editing_an_analysing_plugin_analyses_every_file_again(tmp_path: Path) -> None:
    scans = Scans(tmp_path)
    scans.scan()
    scans.plugin(word="two")
    analysed, record = scans.scan()
    assert analysed == ANALYSED
    assert scans.scan()[0] == []


def test_another_rule_set_analyses_every_file_again(tmp_path: Path) -> None:
    scans = Scans(tmp_path)
    scans.scan()
    assert scans.scan("--disable-rule", "NPU010")[0] == ANALYSED
    assert scans.scan("--disable-rule", "NPU010")[0] == []
    assert scans.scan()[0] == []  # the first rule set's entries are still there


def test_a_file_a_hook_raised_on_is_analysed_again_and_reports_it_again(tmp_path: Path) -> None:
    scans = Scans(tmp_path, {**FILES, "train.py": TF_SCRIPT + "# raise here\n"})
    runs = [scans.scan() for _ in range(2)]
    assert [analysed for analysed, _ in runs] == [ANALYSED, ["train.py"]]
    errors = [[(f["rule_id"], f["path"]) for f in record["findings"] if f["status"] == "error"]
              for _, record in runs]
    assert errors == [[("PLUGIN", "train.py")]] * 2


def test_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    selection = RuleSelection()
    data = FILES["placement.py"].encode()
    analysis = cached_analysis(selection, str(tmp_path / "ws"))
    fresh = analysis("placement.py", data)
    assert analysis.fingerprint is not None and fresh.facts
    key = analysis_key(analysis.fingerprint, "placement.py", data)
    for damaged in (b"not zlib", zlib.compress(b""), zlib.compress(b'{"a": 1}'), zlib.compress(b"[1]")):
        open_store(str(tmp_path / "ws")).put(key, damaged, None)
        again = cached_analysis(selection, str(tmp_path / "ws"))
        assert (again("placement.py", data), again.hits) == (fresh, 0)
    served = cached_analysis(selection, str(tmp_path / "ws"))
    assert (served("placement.py", data), served.hits) == (fresh, 1)


def test_the_fingerprint_covers_the_code_that_runs_the_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    """``LoadedRules.file_facts`` decides which files are read and which analyses each gets; it
    lives in ``orchestrator/``, outside the hashed packages: an edit of it must miss every entry
    (a TF file's cached facts had no standalone-Keras fact once that analysis was added there)."""
    from npu_codemod.orchestrator.batch import analysis_cache
    from npu_codemod.orchestrator.loaded_rules import LoadedRules, RuleSelection

    selection = RuleSelection()
    analysis_cache.analysis_fingerprint.cache_clear()
    first = analysis_cache.analysis_fingerprint(selection)
    real = analysis_cache.module_source_hash
    monkeypatch.setattr(analysis_cache, "module_source_hash",
                        lambda name: "edited" if name == LoadedRules.__module__ else real(name))
    analysis_cache.analysis_fingerprint.cache_clear()
    try:
        assert first is not None and analysis_cache.analysis_fingerprint(selection) != first
    finally:
        analysis_cache.analysis_fingerprint.cache_clear()
