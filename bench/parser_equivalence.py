#!/usr/bin/env python3
"""The engine's parser against fissix's driver on every ``.py`` file under some folders.

Usage: python bench/parser_equivalence.py [FOLDER ...] [--minutes N]

Default folder: the running interpreter's site-packages (with ``.[verify]`` installed:
TensorFlow, Keras, NumPy and the rest, some 7,700 files). Each file is parsed by both with
the Python 3 grammar, on two processes, and compared as ``tests/test_parser.py`` compares them
(every node's class and attributes, parent links, ``used_names``; the exception's type and
arguments when both fail). Prints the counts and any file that differs; exit code 1 if one
does. Files over 300 KB are skipped (fissix needs seconds per such file). Not a timed
benchmark: a wider proof of "same trees" than the suite can afford in CI.
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fissix import pygram, pytree  # noqa: E402
from fissix.pgen2 import driver  # noqa: E402

from npu_codemod.codemods.parser import Parser  # noqa: E402

from support.trees import parse_outcome  # type: ignore[import-not-found]  # noqa: E402

PY3 = pygram.python_grammar_no_print_and_exec_statement

MAX_BYTES = 300_000
_FISSIX = driver.Driver(PY3, convert=pytree.convert)
_OURS = Parser(PY3)


def compare(path: Path) -> tuple[str, str]:
    """(path, verdict): ``same-tree``, ``same-error``, ``DIFFERS``, ``skipped-big``, ``unreadable``."""
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return str(path), "unreadable"
    if len(text) > MAX_BYTES:
        return str(path), "skipped-big"
    text = text if text.endswith("\n") or not text else text + "\n"
    theirs, ours = parse_outcome(_FISSIX.parse_string, text), parse_outcome(_OURS.parse_string, text)
    return str(path), f"same-{theirs[0]}" if theirs == ours else "DIFFERS"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="*", type=Path,
                        default=[Path(sysconfig.get_paths()["purelib"])])
    parser.add_argument("--minutes", type=float, default=30.0, help="stop after this long")
    args = parser.parse_args(argv)
    files = sorted(path for folder in args.folders for path in folder.rglob("*.py"))
    deadline = time.monotonic() + 60 * args.minutes
    counts: Counter[str] = Counter()
    differing: list[str] = []
    with Pool(2) as pool:
        for path, verdict in pool.imap_unordered(compare, files, chunksize=4):
            counts[verdict] += 1
            if verdict == "DIFFERS":
                differing.append(path)
            if time.monotonic() > deadline:
                print(f"stopped after {args.minutes} minutes")
                break
    print(f"{sum(counts.values())} of {len(files)} files compared: {dict(sorted(counts.items()))}")
    for path in differing:
        print(f"DIFFERS: {path}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
