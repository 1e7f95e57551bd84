"""Instructions, not seconds: ``scan --jobs 1 --no-cache`` of a folder of repositories against
the bare fissix parse of their TF files, both counted by valgrind's callgrind.

CPU seconds drift on a shared machine (the same scan took 4.2 s and 6.7 s ten minutes apart in
the eighth round), so two versions of the tool compared by seconds need many alternating pairs.
The instructions a run executes are the same from one run to the next (``PYTHONHASHSEED=0``),
whatever the load: one run of each side is a comparison. They are not seconds (a cache miss
costs more than an add), so the issue's target stays measured in CPU seconds by
``run_bench.py --corpus``; this is the A/B tool.

    python bench/instructions.py --corpus /tmp/tf1-repos [--python /other/checkout/.venv/bin/python]

- **scan**: every process of the scan (the CLI, its worker, the git processes), summed from
  callgrind's output files; a forked worker counts from its fork on (``FORK_DUMP``).
- **bare parse**: ``run_bench.parse`` (fissix's driver) of every TF file, in a process of its
  own, less the same process reading the same files without parsing them (interpreter
  start-up, imports, git).

Valgrind must be installed (Debian: ``apt-get install valgrind``); a run takes about twenty
times the scan's CPU time.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

HERE = Path(__file__).resolve().parent
#: A forked child starts with its parent's counts so far (callgrind copies them): without a
#: dump before each ``os.fork`` (part files ``callgrind.<pid>.<n>``, which reset the parent's
#: counts), the worker's file would count the CLI's start-up a second time.
FORK_DUMP = ("--dump-before=os_fork*",)
#: The total line of a callgrind output file: ``summary: 29474596144``.
SUMMARY = re.compile(rb"^summary:\s+(\d+)", re.MULTILINE)
#: The measured command of a callgrind output file: ``cmd:  /usr/bin/python -m npu_codemod scan``.
COMMAND = re.compile(rb"^cmd:\s+(.*)$", re.MULTILINE)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, metavar="DIR", help="a folder of git repositories, or one")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter whose npu-codemod scans (another checkout's, for an A/B)")
    # The measured child: read (and with --parse, parse) the TF files of LIST's repositories.
    parser.add_argument("--bare", metavar="LIST", help=argparse.SUPPRESS)
    parser.add_argument("--parse", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bare is not None:
        return bare_child(args.bare, args.parse)
    if args.corpus is None:
        parser.error("--corpus DIR is needed")
    if not args.corpus.is_dir():
        print(f"bench: {args.corpus} is not a folder")
        return 2
    if shutil.which("valgrind") is None:
        print("bench: valgrind is not installed (apt-get install valgrind); nothing measured")
        return 2
    sys.path.insert(0, str(HERE))
    from run_bench import compile_bytecode, corpus_repos  # the CLI's imports only when measuring

    repos = corpus_repos(args.corpus)
    if not repos:
        print(f"bench: no git repository in {args.corpus}")
        return 2
    compile_bytecode(args.python)  # both sides of an A/B as installed, compiler left out
    with tempfile.TemporaryDirectory(prefix="npu-codemod-instructions-") as scratch:
        work = Path(scratch)
        listing = work / "repos.txt"
        listing.write_text("".join(f"{repo}\n" for repo in repos))
        try:
            scan = scan_instructions(args.python, listing, work)
            bare = bare_instructions(listing, work)
        except Failed as failed:
            print(f"bench: {failed}; nothing measured")
            return 1
    print(f"{len(repos)} repositories")
    print(f"scan --jobs 1 --no-cache  {scan / 1e9:8.3f} G instructions (every process)")
    print(f"bare fissix parse         {bare / 1e9:8.3f} G instructions (start-up, imports and reading left out)")
    print(f"scan / bare parse         {scan / bare:8.3f}x")
    return 0


def scan_instructions(python: str, listing: Path, work: Path) -> int:
    """Instructions of ``python -m npu_codemod scan`` over the repositories of ``listing``."""
    out = work / "scan"
    out.mkdir()
    command = [python, "-m", "npu_codemod", "scan", "--repos", str(listing), "--jobs", "1",
               "--no-progress", "--no-cache", "--report-dir", str(out / "report"),
               "--workspace", str(out / "workspace")]
    total = counted(command, out, children=True)
    if not forks_dumped(out, python):
        raise Failed(f"the worker's counts include its parent's ({FORK_DUMP[0]} matched no function "
                     f"of {python})")
    return total


def bare_instructions(listing: Path, work: Path) -> int:
    """Instructions of the bare parse of the TF files of ``listing``'s repositories: the child
    that reads and parses them less the one that only reads them."""
    runs = []
    for name, flags in (("bare", ["--parse"]), ("read", [])):
        out = work / name
        out.mkdir()
        runs.append(counted([sys.executable, str(Path(__file__).resolve()), "--bare", str(listing), *flags], out))
    return runs[0] - runs[1]


def counted(command: list[str], out: Path, children: bool = False) -> int:
    """Instructions ``command`` executes under callgrind (with the processes it starts)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/callgrind.%p",
                f"--trace-children={'yes' if children else 'no'}", *FORK_DUMP]
    done = subprocess.run(valgrind + command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, errors="replace")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise Failed(f"{' '.join(command[:4])} ... exited {done.returncode} under valgrind ({last})")
    return total_instructions(out)


class Failed(Exception):
    """A measured command did not succeed (what it said last)."""


def forks_dumped(folder: Path, python: str) -> bool:
    """Whether the counts of ``python``'s processes in ``folder`` hold no parent's twice: one
    such process (nothing forked), or a part file a dump before a fork wrote."""
    own = [path for path in folder.glob("callgrind.*") if _command(path).startswith(python.encode())]
    return len(own) <= 1 or any(path.name.count(".") > 1 for path in own)


def _command(path: Path) -> bytes:
    """The ``cmd:`` line of a callgrind output file, without the key (b"" if none)."""
    match = COMMAND.search(path.read_bytes())
    return match.group(1) if match else b""


def total_instructions(folder: Path) -> int:
    """The sum of the ``summary:`` lines of the callgrind output files in ``folder``."""
    total = 0
    for path in folder.glob("callgrind.*"):
        match = SUMMARY.search(path.read_bytes())
        total += int(match.group(1)) if match else 0
    return total


def bare_child(listing: str, parse: bool) -> int:
    """The measured child: the TF files of the repositories listed, read, and with ``parse``
    parsed by fissix's driver (a file it cannot read counts what it cost until the error)."""
    sys.path.insert(0, str(HERE))
    import run_bench

    texts = [text for line in Path(listing).read_text().splitlines() if line.strip()
             for _path, _data, text in run_bench.tf_sources(Path(line.strip()))]
    for text in texts if parse else ():
        try:
            run_bench.parse(text)
        except Exception:  # noqa: BLE001 - fissix's ParseError or TokenError: the cost is counted
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
