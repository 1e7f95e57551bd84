"""The repository-wide analysis never reads a file the engine will not parse: a 50 MB
generated file once cost every `ast`-based analysis hook minutes and gigabytes."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.codemods.engine import MAX_SOURCE_BYTES
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.manager import PluginSpec

RECORDER = '''
from npu_codemod.plugins.hookspecs import hookimpl
SEEN = []


@hookimpl
def npu_codemod_analyze_file(path, text):
    SEEN.append(path)
    return ["seen:" + path]
'''


def test_files_over_the_size_limit_reach_no_analysis_hook(tmp_path: Path) -> None:
    plugin = tmp_path / "recorder.py"
    plugin.write_text(RECORDER)
    loaded_rules = load_rules(RuleSelection(plugins=PluginSpec(extra=(str(plugin),))))
    small = b"import tensorflow as tf\nx = 1\n"
    huge = small + b"y = 2\n" * (MAX_SOURCE_BYTES // 6 + 1)
    analysis = loaded_rules.repository_facts([("small.py", small), ("huge.py", huge)])
    assert "seen:small.py" in analysis.facts and "seen:huge.py" not in analysis.facts
