"""Fuzzing the two readers of untrusted bytes: the repo list parser and the source decoder.

Neither may raise on any input (other than the decoder's one documented UndecodableSource),
and what they accept they must reproduce exactly.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods.source import UndecodableSource, decode_source
from npu_codemod.orchestrator.repolist import parse_repo_list, read_repo_list

SECRET = "s3cr3t-t0ken"
BASE = Path("/nonexistent/base")

# --- Repo list ---------------------------------------------------------------------------------

FRAGMENTS = st.sampled_from([
    "alpha", "../models/bert", "/abs/path", "~", "~nobody-here/x", "~/repo", "a b", "a\x00b",
    f"https://user:{SECRET}@example.com/org/repo.git", f"https://{SECRET}@h/r", "git@host:org/r",
    "ssh://git@host/r", "file:///tmp/r", "main", "release-1.4", "HEAD~1", "slug=org/repo",
    "slug=", "=x", "key=value", "#", "# comment", "  ", "\t", "\u00a0", "\u2028", "\x0c", "\x1c",
    "é", "数据", "\\", "'", '"', "*", "..", ".", "\ud7ff",
])
LINE = st.one_of(st.text(max_size=40), st.lists(FRAGMENTS, max_size=5).map(" ".join))
BREAK = st.sampled_from(["\n", "\r\n", "\r"])


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(LINE, max_size=12), breaks=st.lists(BREAK, min_size=12, max_size=12))
def test_repo_list_parser_never_raises_and_accounts_for_every_line(
    lines: list[str], breaks: list[str]
) -> None:
    text = "".join(line + brk for line, brk in zip(lines, breaks))
    entries = parse_repo_list(text, BASE, "list.txt")
    numbered = re.split(r"\r\n|\r|\n", text)
    by_line = {entry.line: entry for entry in entries}
    seen = set()
    for number, raw in enumerate(numbered, start=1):
        content = "" if raw.lstrip().startswith("#") else raw.split("#", 1)[0].strip()
        entry = by_line.pop(number, None)
        if not content:
            assert entry is None, (number, raw)
            continue
        if entry is None:  # only a repeat of an earlier entry may be dropped
            (alone,) = parse_repo_list(raw, BASE, "list.txt")
            assert alone.error is None and (alone.location, alone.base_ref) in seen, (number, raw)
            continue
        seen.add((entry.location, entry.base_ref))
        for shown in (entry.name, entry.error or ""):
            assert SECRET not in shown
            assert "\n" not in shown and "\r" not in shown
        if entry.error:
            assert entry.error.startswith(f"list.txt:{number}: ")
    assert not by_line  # no entry for a line that is not there


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_repo_list_parser_takes_any_decoded_bytes(data: bytes) -> None:
    for text in (data.decode("latin-1"), data.decode("utf-8", "surrogateescape")):
        for entry in parse_repo_list(text, Path("/nonexistent"), "list.txt"):
            assert entry.line >= 1


def test_unusable_paths_are_entries_with_an_error_naming_the_line() -> None:
    entries = parse_repo_list("ok\n~nobody-npu-codemod/x\nbad\x00path\n", Path("/base"), "l.txt")
    assert [e.line for e in entries] == [1, 2, 3]
    assert entries[0].error is None
    assert entries[1].error.startswith("l.txt:2: unusable path '~nobody-npu-codemod/x': ")
    assert entries[2].error.startswith("l.txt:3: unusable path 'bad\\x00path': ")


def test_line_numbers_are_an_editors_line_numbers() -> None:
    entries = parse_repo_list("a\x0cb\nc\u2028d\r\ne\rf\n", Path("/base"), "l.txt")
    assert [(e.line, e.name, e.base_ref) for e in entries] == [
        (1, "a", "b"), (2, "c", "d"), (3, "e", None), (4, "f", None)]


def test_double_quotes_hold_a_path_with_spaces_and_broken_quoting_is_an_error() -> None:
    entries = parse_repo_list('"my repo" main\n"x y" slug=o/r\n"open\nab"c\n""\n', Path("/b"), "l.txt")
    assert [(e.name, e.location, e.base_ref, e.options) for e in entries[:2]] == [
        ("my repo", "/b/my repo", "main", ()), ("x y", "/b/x y", None, (("slug", "o/r"),))]
    assert [e.error.split(": ")[0] for e in entries[2:]] == ["l.txt:3", "l.txt:4", "l.txt:5"]
    assert all("malformed entry" in e.error for e in entries[2:])


def test_a_repository_listed_again_with_another_base_is_an_error_entry() -> None:
    entries = parse_repo_list("a\n./a/\n/b/a\na dev\nb main\nb  main\n", Path("/b"), "l.txt")
    assert [(e.name, e.base_ref, e.error) for e in entries[:1]] == [("a", None, None)]
    assert entries[1].error == ("l.txt:4: 'a' is already listed on line 1 with base HEAD: one migration "
                                "branch per repository and run (migrate another base in a run with "
                                "its own --branch)")
    assert [(e.name, e.base_ref, e.error) for e in entries[2:]] == [("b", "main", None)]


def test_repo_list_file_with_a_bom_and_crlf(tmp_path: Path) -> None:
    (tmp_path / "l.txt").write_bytes(b"\xef\xbb\xbfalpha main\r\nbeta\r\n")
    entries = read_repo_list(str(tmp_path / "l.txt"))
    assert [(e.name, e.base_ref, e.error) for e in entries] == [("alpha", "main", None), ("beta", None, None)]
    assert [e.name for e in read_repo_list("-", "\ufeffalpha\n")] == ["alpha"]


# --- Source decoder ----------------------------------------------------------------------------

COOKIES = st.sampled_from([
    b"", b"# -*- coding: latin-1 -*-\n", b"# coding: utf-8\n", b"#!/usr/bin/env python\n# coding=cp1252\n",
    b"# vim: set fileencoding=gbk :\n", b"# coding: shift_jis\n", b"# coding: utf-16\n",
    b"# coding: utf_16_be\n", b"# coding: utf-32\n", b"# coding: utf-7\n", b"# coding: iso2022_jp\n",
    b"# coding: hz\n", b"# coding: rot13\n", b"# coding: hex\n", b"# coding: idna\n",
    b"# coding: punycode\n", b"# coding: unicode_escape\n", b"# coding: raw_unicode_escape\n",
    b"# coding: klingon\n", b"# coding: utf-8-sig\n", codecs.BOM_UTF8, codecs.BOM_UTF8 + b"# coding: latin-1\n",
    codecs.BOM_UTF16_LE, b"\n\n# coding: latin-1\n",
])
TEXT_BODY = st.tuples(st.text(max_size=80), st.sampled_from(["utf-8", "latin-1", "cp1252", "gbk", "utf-16"]))


def _encoded(pair: tuple[str, str]) -> bytes:
    text, codec = pair
    return text.encode(codec, "replace")


BODIES = st.one_of(st.binary(max_size=120), TEXT_BODY.map(_encoded))


def _decodes_or_says_why(data: bytes) -> None:
    try:
        source = decode_source(data)
    except UndecodableSource as exc:
        assert exc.line >= 1 and str(exc) and "\n" not in str(exc)
        return
    assert source.encode(source.text) == data  # lossless, byte for byte


@settings(max_examples=600, deadline=None)
@given(cookie=COOKIES, body=BODIES)
def test_decoder_raises_only_undecodable_source_and_round_trips(cookie: bytes, body: bytes) -> None:
    _decodes_or_says_why(cookie + body)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_decoder_on_raw_bytes(data: bytes) -> None:
    _decodes_or_says_why(data)


def test_codec_that_is_not_ascii_compatible_is_refused() -> None:
    for cookie in (b"# coding: utf-16\n", b"# coding: punycode\n", b"# coding: hex\n"):
        try:
            decode_source(cookie + b"import tensorflow as tf\n")
        except UndecodableSource as exc:
            assert "encoding" in str(exc)
        else:
            raise AssertionError(f"{cookie!r} was accepted")
