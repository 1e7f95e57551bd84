"""The hand-over's record store: each record given back once, bounded by count and bytes (the
oldest go first), and its memory maps unmapped as soon as no record in them is kept."""

from __future__ import annotations

import os

import pytest

from npu_codemod.codemods import record_store
from npu_codemod.codemods.record_store import RecordStore


def mapped_bytes() -> int:
    """Bytes of the anonymous mappings the kernel lists for this process (``/proc/self/maps``;
    adjacent ones may be merged: their size, not their number)."""
    total = 0
    with open("/proc/self/maps", encoding="ascii") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) == 5:
                start, end = (int(part, 16) for part in fields[0].split("-"))
                total += end - start
    return total


def test_each_record_comes_back_once_with_its_extra() -> None:
    store: RecordStore[str, int] = RecordStore(10, 1 << 20)
    store.put("a", b"first", 1)
    store.put("b", b"\0" * 3000, 2)
    assert store.pop("a") == (b"first", 1)
    assert store.pop("a") is None and store.pop("c") is None
    store.put("b", b"again", 3)  # replaces the record the key held
    assert len(store) == 1 and store.size == 5
    assert store.pop("b") == (b"again", 3)
    assert store.size == 0 and store.mapped() == 0


def test_the_oldest_records_go_first_beyond_either_bound() -> None:
    by_count: RecordStore[int, None] = RecordStore(3, 1 << 20)
    for number in range(5):
        by_count.put(number, bytes([number]) * 100, None)
    assert [by_count.pop(number) is not None for number in range(5)] == [False, False, True, True, True]
    by_bytes: RecordStore[int, None] = RecordStore(100, 250)
    for number in range(5):
        by_bytes.put(number, bytes([number]) * 100, None)
    assert by_bytes.size == 200 and len(by_bytes) == 2
    assert by_bytes.pop(4) == (b"\4" * 100, None)


def test_a_map_is_unmapped_once_its_last_record_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_store, "CHUNK", 4096)
    store: RecordStore[int, None] = RecordStore(1000, 1 << 24)
    for number in range(12):  # three records a map: four maps
        store.put(number, os.urandom(1300), None)
    assert store.mapped() == 4
    for number in range(6):
        store.pop(number)
    assert store.mapped() == 2  # the first two maps hold no record: unmapped
    store.put(99, os.urandom(10_000), None)  # larger than a map: one of its own
    assert store.mapped() == 3
    store.clear()
    assert store.mapped() == 0 and store.size == 0 and len(store) == 0


def test_the_kernel_sees_the_maps_go() -> None:
    """Not only the store's count: the system gets the memory back."""
    records = [os.urandom(4096) for _ in range(400)]
    before = mapped_bytes()
    store: RecordStore[int, None] = RecordStore(10_000, 1 << 26)
    for number, record in enumerate(records):  # 1.6 MB: several maps of CHUNK bytes
        store.put(number, record, None)
    assert mapped_bytes() - before >= 400 * 4096
    for number in range(400):
        store.pop(number)
    assert mapped_bytes() - before < record_store.CHUNK
