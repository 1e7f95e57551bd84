"""``written.line_opcodes``: the opcodes turning a file's lines into its rewrite's cover both
sides in order, and every ``equal`` block is equal; a long unchanged run is one block."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods import written
from npu_codemod.codemods.written import line_opcodes

_LINES = st.lists(st.sampled_from(["", "a", "b", "x = 1", "    pass", "c", "d", "e"]), max_size=60)


def _check(before: list[str], after: list[str]) -> None:
    first = new_first = 0
    previous = ""
    for tag, start, end, new_start, new_end in line_opcodes(before, after):
        assert (start, new_start) == (first, new_first) and tag != previous  # contiguous, merged
        assert (start, new_start) != (end, new_end)
        if tag == "equal":
            assert before[start:end] == after[new_start:new_end]
        first, new_first, previous = end, new_end, tag
    assert (first, new_first) == (len(before), len(after))


@settings(max_examples=300, deadline=None)
@given(_LINES, _LINES)
def test_opcodes_cover_both_sides(before: list[str], after: list[str]) -> None:
    _check(before, after)


@settings(max_examples=200, deadline=None)
@given(_LINES, _LINES)
def test_anchored_gaps_cover_both_sides(before: list[str], after: list[str]) -> None:
    small, written.SMALL_GAP = written.SMALL_GAP, 4  # the patience diff's path
    try:
        _check([f"{line}{index % 5}" for index, line in enumerate(before)],
               [f"{line}{index % 5}" for index, line in enumerate(after)])
    finally:
        written.SMALL_GAP = small


def test_one_line_changed_in_a_long_file() -> None:
    before = [f"line {number}" if number % 7 else "" for number in range(3000)]
    after = [*before[:1200], "changed", *before[1201:]]
    assert line_opcodes(before, after) == [("equal", 0, 1200, 0, 1200), ("replace", 1200, 1201, 1200, 1201),
                                           ("equal", 1201, 3000, 1201, 3000)]
