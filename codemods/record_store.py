"""A bounded store of byte records kept outside the C heap, each given back once.

The repository analysis keeps a record of a few kilobytes per file for the engine
(``ast_handover``), and the engine takes them back one file at a time. Kept as ``bytes``
objects, they are allocated from the C heap (they are too large for Python's small-object
allocator), and once the engine has taken them, the holes they leave are reused only by other
large allocations: the engine's objects are small, so the heap stayed as large as it was at
the analysis's end, and the worker's peak 1-2 MB higher (measured on the bench's TF-only corpus,
every file of which is rewritten). Here the records are copied into anonymous memory maps of
:data:`CHUNK` bytes, filled in turn; a map is unmapped as soon as the last record in it is
taken or dropped, which gives its memory back to the system. Records are taken in about the
order they were put (the engine goes through the files as the analysis did), so the maps go
one after another while the engine works.
"""

from __future__ import annotations

import mmap
from typing import Generic, Hashable, Optional, TypeVar

#: The size of each memory map (a record larger than one gets a map of its own).
CHUNK = 256 * 1024

_Key = TypeVar("_Key", bound=Hashable)
_Extra = TypeVar("_Extra")


class _Chunk:
    """One memory map: how much of it is filled, and how many records in it are still kept."""

    __slots__ = ("memory", "used", "live")

    def __init__(self, size: int) -> None:
        self.memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self.used = 0
        self.live = 0


class RecordStore(Generic[_Key, _Extra]):
    """Byte records by key, each with a small Python value (``extra``, kept as it is), at most
    ``max_records`` of them and ``max_bytes`` of their bytes: the oldest go first."""

    def __init__(self, max_records: int, max_bytes: int) -> None:
        self.max_records = max_records
        self.max_bytes = max_bytes
        self.size = 0  # bytes of the records kept
        self._records: dict[_Key, tuple[_Chunk, int, int, _Extra]] = {}
        self._current: Optional[_Chunk] = None  # the map being filled

    def __len__(self) -> int:
        return len(self._records)

    def put(self, key: _Key, data: bytes, extra: _Extra) -> None:
        """Keep ``data`` and ``extra`` under ``key`` (replacing what it held), then drop the
        oldest records while the store holds more than its bounds."""
        self._drop(key)
        chunk = self._current
        if chunk is None or len(chunk.memory) - chunk.used < len(data):
            chunk = self._current = _Chunk(max(CHUNK, len(data)))
        chunk.memory[chunk.used:chunk.used + len(data)] = data
        self._records[key] = (chunk, chunk.used, len(data), extra)
        chunk.used += len(data)
        chunk.live += 1
        self.size += len(data)
        while self._records and (len(self._records) > self.max_records or self.size > self.max_bytes):
            self._drop(next(iter(self._records)))

    def pop(self, key: _Key) -> Optional[tuple[bytes, _Extra]]:
        """The record kept under ``key`` and its ``extra``, no longer kept; None if none is."""
        found = self._records.get(key)
        if found is None:
            return None
        chunk, start, length, extra = found
        data = chunk.memory[start:start + length]
        self._drop(key)
        return data, extra

    def clear(self) -> None:
        """Drop every record, and unmap every map."""
        for key in list(self._records):
            self._drop(key)

    def mapped(self) -> int:
        """How many memory maps are open (the tests: none once every record is taken)."""
        chunks = {id(chunk): chunk for chunk, _, _, _ in self._records.values()}
        if self._current is not None:
            chunks[id(self._current)] = self._current
        return len(chunks)

    def _drop(self, key: _Key) -> None:
        found = self._records.pop(key, None)
        if found is None:
            return
        chunk, _, length, _ = found
        self.size -= length
        chunk.live -= 1
        if chunk.live == 0:
            chunk.memory.close()
            if chunk is self._current:
                self._current = None
