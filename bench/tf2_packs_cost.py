"""What the TF 2.x packs cost on the TF-only corpus (issue #31's acceptance): the rewrite with every
pack against the same rewrite without ``tf2`` and ``tf2-distributed``, each against the bare fissix
parse of the same files, interleaved file by file in one run (``run_bench.measure_interleaved``).

    python bench/tf2_packs_cost.py [--rounds 3] [--quick]

Prints each round's CPU seconds and ratios, and the minimum over the rounds of "every pack /
without the tf2 packs" (at most 1.05 wanted): the TF-only corpus is TF 1.x code, so the tf2 packs
should cost little more than their file-kind gate there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from run_bench import EVERY_PACK, measure_interleaved, parse, tf_sources

from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.packs import DEFAULT, PACKS

from corpus import SIZES, build_corpora

HERE = Path(__file__).resolve().parent
TF2_PACKS = frozenset({"tf2", "tf2-distributed"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="the quick corpora (80 TF scripts)")
    parser.add_argument("--corpora", type=Path, default=HERE / "corpora")
    args = parser.parse_args(argv)
    corpora = build_corpora(args.corpora, SIZES["quick" if args.quick else "full"], seed=8)
    files = tf_sources(corpora.tf_scripts)
    every = load_rules(EVERY_PACK)
    without = load_rules(RuleSelection(only=frozenset({DEFAULT, *(pack.name for pack in PACKS)}) - TF2_PACKS))
    facts = {name: rules.repository_facts((path, data) for path, data, _ in files).facts
             for name, rules in (("every", every), ("without", without))}
    ratios = []
    for round_ in range(1, args.rounds + 1):
        totals, outcomes = measure_interleaved(files, {
            "parse": lambda data, path, text: parse(text) and None,
            "every": lambda data, path, text: every.engine.process(data, path, repo="tf", facts=facts["every"]),
            "without": lambda data, path, text: without.engine.process(data, path, repo="tf",
                                                                       facts=facts["without"])})
        parse_cpu, every_cpu, without_cpu = (totals[name][1] for name in ("parse", "every", "without"))
        ratios.append(every_cpu / without_cpu)
        same = sum(a.new_data == b.new_data for a, b in zip(outcomes["every"], outcomes["without"]))
        print(f"round {round_}: {len(files)} files; bare parse {parse_cpu:.2f} CPU s, every pack "
              f"{every_cpu:.2f} ({every_cpu / parse_cpu:.2f}x the parse), without the tf2 packs "
              f"{without_cpu:.2f} ({without_cpu / parse_cpu:.2f}x); every/without {ratios[-1]:.3f}; "
              f"same output on {same} files")
    print(f"every pack / without the tf2 packs: min {min(ratios):.3f} over {len(ratios)} rounds "
          f"(at most 1.05 wanted)")
    return 0 if min(ratios) <= 1.05 else 1


if __name__ == "__main__":
    sys.exit(main())
