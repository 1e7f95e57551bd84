"""The finished repositories' records, kept on disk while a batch runs: the parent's memory
does not grow with the number of repositories or of their findings.

A record is appended as one JSON line when its repository ends (in whatever order they end);
the offsets of the lines give them back in repo-list order, each read from disk when asked
for. The file has no name (unlinked as soon as it is made), so no run leaves it behind,
however it ends: done, Ctrl-C, SIGTERM, SIGKILL or a full disk.
"""

from __future__ import annotations

import json
import os
import tempfile
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Iterator, Mapping

_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


class ResultSpool(Sequence[dict[str, Any]]):
    """The run record's ``repos``: one record per repository of the list, by its index there.

    Read-only to its readers, and re-iterable: each pass reads the records from disk again,
    so a report writer holds one repository at a time.
    """

    def __init__(self, directory: Path, count: int) -> None:
        self._file = tempfile.TemporaryFile(prefix=".npu-codemod-results-", dir=directory)
        self._offsets = array("q", [-1]) * count  # where each index's line starts; -1: not yet
        self._lengths = array("q", [0]) * count
        self._end = 0

    def add(self, index: int, record: Mapping[str, Any]) -> None:
        """Store the record of the repository at ``index`` (written now: later changes to
        ``record`` are not seen)."""
        line = (_ENCODE(record) + "\n").encode("utf-8")
        self._file.write(line)
        self._file.flush()  # readers use the file descriptor, not this buffer
        self._offsets[index], self._lengths[index] = self._end, len(line)
        self._end += len(line)

    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def size(self) -> int:
        """The bytes of JSON the records stored so far take (``run_record.RepoRecords`` keeps
        the typed records of a small spool)."""
        return self._end

    # Sequence.__getitem__ also takes a slice; a spool is read one record at a time.
    def __getitem__(self, index: int) -> dict[str, Any]:  # type: ignore[override]
        offset = self._offsets[index]  # IndexError past the end, as Sequence expects
        if offset < 0:
            raise LookupError(f"repository {index} of the list has no result yet")
        record: dict[str, Any] = json.loads(os.pread(self._file.fileno(), self._lengths[index], offset))
        return record

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self[index] for index in range(len(self)))

    def close(self) -> None:
        try:
            self._file.close()
        except OSError:  # bytes a full disk refused: no one reads an unnamed file again
            pass

    def __enter__(self) -> "ResultSpool":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
