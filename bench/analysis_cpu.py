"""CPU seconds of the repository-wide analysis (``LoadedRules.repository_facts``) against ``ast.parse``.

    python bench/analysis_cpu.py                       # the full bench monorepo
    python bench/analysis_cpu.py bench/corpora/quick/monorepo --rules all

The analysis runs every plugin's ``npu_codemod_analyze_file`` hook on each TensorFlow file of
a repository before its files go to the workers; its cost should be a small multiple of one
``ast.parse`` of those files (the hooks share one parse and one walk per file: ``ModuleIndex``).
Also prints each hook's own share (the first hook of a file pays for the parse and the walk).
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_bench import EVERY_PACK, read_all  # noqa: E402

from npu_codemod.codemods.names import IMPORTS_TF  # noqa: E402
from npu_codemod.codemods.source import decode_source  # noqa: E402
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", nargs="?", type=Path, default=HERE / "corpora" / "full" / "monorepo")
    parser.add_argument("--rules", choices=("default", "all"), default="default")
    args = parser.parse_args(argv)
    loaded_rules = load_rules(EVERY_PACK if args.rules == "all" else RuleSelection())
    files = read_all(args.repo)
    texts = [(path, decode_source(data).text) for path, data in files if loaded_rules.engine.wants(data)]
    texts = [(path, text) for path, text in texts if IMPORTS_TF.search(text)]
    start = time.process_time()
    for _, text in texts:
        ast.parse(text)
    parse_s = time.process_time() - start
    start = time.process_time()
    analysis = loaded_rules.repository_facts(files)
    analyze_s = time.process_time() - start
    print(f"{len(texts)} TF files: analyze {analyze_s:.2f} s CPU, ast.parse {parse_s:.2f} s "
          f"({analyze_s / parse_s:.1f}x); {len(analysis.facts)} facts")
    for name, seconds in sorted(hook_shares(loaded_rules, texts).items(), key=lambda item: -item[1]):
        print(f"  {seconds:6.2f} s  {name}")
    return 0


def hook_shares(loaded_rules, texts: list[tuple[str, str]]) -> dict[str, float]:
    """CPU seconds of each analysis hook over ``texts`` (the parse is cached per text: the
    first hook of each file pays for it)."""
    shares: dict[str, float] = {}
    hooks = loaded_rules.plugins.pm.hook.npu_codemod_analyze_file.get_hookimpls()
    for path, text in texts:
        for hook in hooks:
            start = time.process_time()
            hook.function(path=path, text=text)
            shares[hook.plugin_name] = shares.get(hook.plugin_name, 0.0) + time.process_time() - start
    return shares


if __name__ == "__main__":
    sys.exit(main())
