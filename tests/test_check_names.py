"""``npu-codemod check`` prints file names that cannot forge CI log lines: a name holding a
newline, a tab or bytes that are not UTF-8 is quoted as git quotes it (real files, real CLI)."""

from __future__ import annotations

import os
from pathlib import Path

from support.cli import cli

TRAIN = "import tensorflow as tf\n\n\ndef head(x):\n    return tf.nn.dropout(x, 0.5)\n"


def test_unusual_file_names_are_quoted_on_one_line(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "fake.py:1:1: NPU000 all clear\nreal.py").write_text(TRAIN)
    (src / "tab\tname.py").write_text(TRAIN)
    with open(os.fsencode(src) + b"/caf\xe9.py", "w") as latin1_name:  # not UTF-8
        latin1_name.write(TRAIN)

    done = cli("check", "src", cwd=tmp_path, expect=1)

    starts = sorted({line.split(".py", 1)[0] for line in done.stdout.splitlines()})
    assert starts == ['"src/caf\\351', '"src/fake', '"src/tab\\tname']
    assert all(line.startswith('"src/') for line in done.stdout.splitlines())
    assert '"src/fake.py:1:1: NPU000 all clear\\nreal.py":1:1: NPU001' in done.stdout
