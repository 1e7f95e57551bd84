"""Writing a report file so that it is always whole: the old content or the new, never half.

An interrupted run (Ctrl-C, SIGTERM, a full disk) must not leave a truncated ``run.json``
that ``npu-codemod report`` or ``--only-failed`` would then choke on. The text goes to a
temporary file in the same folder, is flushed to disk, and replaces the target in one rename.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, Optional

_UMASK = os.umask(0o022)  # read once, at import (setting it is the only way to read it)
os.umask(_UMASK)


@contextmanager
def atomic_open(path: Path, newline: Optional[str] = None) -> Iterator[IO[str]]:
    """A UTF-8 text stream whose content replaces ``path`` when the block ends without error."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's 0600 would hide the report from others
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_atomic(path: Path, text: str, newline: Optional[str] = None) -> None:
    """Replace ``path`` with ``text`` (UTF-8) in one step."""
    with atomic_open(path, newline) as stream:
        stream.write(text)

