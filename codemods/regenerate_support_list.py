"""Regenerate the project's copy of Ascend's API support list from the published CSV.

    python -m npu_codemod.codemods.regenerate_support_list path/to/ascend-tf1.15-api-support.csv
    python -m npu_codemod.codemods.regenerate_support_list --check path/to/...csv   # exit 1 if stale
    python -m npu_codemod.codemods.regenerate_support_list --list tf2.6 path/to/ascend-tf2.6-api-support.csv

The source has the columns ``api,module,status`` (see ``data/README.md`` of the shared data).
The copy, ``api_support.csv`` beside this module, keeps ``api,status``: the ``module`` column is
the list's own grouping and is not used; exact duplicate rows are dropped and a name written
with its argument (``hvd.elastic.run(func)``) is kept without it. Its header says where it
comes from, including the source's sha256. ``--list tf2.6`` does the same for the TF 2.6 list
(the ``tf2`` pack's audit, NPU071, and the TF 2.x file detection), into ``api_support_tf2.csv``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import sys
from collections import Counter
from pathlib import Path
from typing import Optional, Sequence

DATA_FILE = Path(__file__).with_name("api_support.csv")
COMMAND = "python -m npu_codemod.codemods.regenerate_support_list"
STATUSES = ("supported", "supported-after-migration", "trains-after-migration",
            "unsupported-harmless", "unsupported", "deprecated", "under-analysis", "compat-alias")
SOURCE_COLUMNS = ["api", "module", "status"]
PROVENANCE = """\
# Ascend's support status of the TensorFlow 1.15 and Horovod Python APIs on Ascend NPUs.
# Source: tf1.15_api_support_list.xlsx in Huawei's Ascend/tensorflow repository (convert_tf2npu,
# master of 2023-12, Apache-2.0), sheet 1, columns API名 and 工具迁移API支持度, as plain facts
# (the list's free-text notes are not included), published as {name}
# ({rows:,} rows, sha256 {digest}).
# This copy: the module column left out, duplicate rows dropped, a name written with its
# argument kept without it. Rows per status:
{counts}
# Regenerate: {command} path/to/{name}
"""
TF26_DATA_FILE = Path(__file__).with_name("api_support_tf2.csv")
TF26_PROVENANCE = """\
# Ascend's support status of the TensorFlow 2.6 Python APIs on Ascend NPUs (TF Adapter 2.x,
# npu_device). Source: v2/TF2.6_api_support_list.xlsx in Huawei's Ascend/tensorflow repository
# (convert_tf2npu, master of 2023-12, Apache-2.0), sheet 1, columns API名 and 工具迁移API支持度,
# as plain facts (the list's free-text notes are not included), published as {name}
# ({rows:,} rows, sha256 {digest}).
# This copy: the module column left out, duplicate rows dropped, a name written with its
# argument kept without it. Rows per status:
{counts}
# Regenerate: {command} --list tf2.6 path/to/{name}
"""
#: ``--list``: (the copy it writes, its provenance header).
LISTS = {"tf1.15": (DATA_FILE, PROVENANCE), "tf2.6": (TF26_DATA_FILE, TF26_PROVENANCE)}


def read_source(text: str) -> list[tuple[str, str]]:
    """``(api, status)`` of each row of the published CSV; ValueError on anything else."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header != SOURCE_COLUMNS:
        raise ValueError(f"expected the columns {','.join(SOURCE_COLUMNS)}, got {header}")
    rows = []
    for number, row in enumerate(reader, start=2):
        if len(row) != 3 or row[2] not in STATUSES or not row[0].strip():
            raise ValueError(f"line {number}: not an api,module,status row: {row}")
        rows.append((row[0].strip(), row[2]))
    return rows


def normalized(rows: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Names without a written argument, duplicates dropped, sorted by name. ValueError when one
    name has two statuses (the audit could not tell which holds)."""
    kept: dict[str, str] = {}
    for api, status in rows:
        name = api.split("(", 1)[0]
        if kept.setdefault(name, status) != status:
            raise ValueError(f"{name} is listed as both {kept[name]} and {status}")
    return sorted(kept.items())


def render(source: str, name: str, provenance: str = PROVENANCE) -> str:
    """The copy's text for the source CSV ``source`` (named ``name`` in the provenance)."""
    rows = read_source(source)
    kept = normalized(rows)
    counts = Counter(status for _, status in kept)
    header = provenance.format(
        name=name, rows=len(rows), digest=hashlib.sha256(source.encode("utf-8")).hexdigest(),
        counts="\n".join(f"#   {status}: {counts[status]:,}" for status in STATUSES),
        command=COMMAND)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["api", "status"])
    writer.writerows(kept)
    return header + out.getvalue()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path, help="ascend-tf1.15-api-support.csv (or tf2.6)")
    parser.add_argument("--list", choices=sorted(LISTS), default="tf1.15",
                        help="which list the source is (default: %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="only check that the shipped copy is up to date (exit 1 if not)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"default: {DATA_FILE.name} (--list tf2.6: {TF26_DATA_FILE.name})")
    args = parser.parse_args(argv)
    out, provenance = LISTS[args.list]
    args.out = args.out or out
    try:
        text = render(args.source.read_text(encoding="utf-8"), args.source.name, provenance)
    except (OSError, ValueError) as exc:
        print(f"regenerate: {args.source}: {exc}", file=sys.stderr)
        return 2
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is out of date: run {COMMAND} {args.source}", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
