"""Decoding and re-encoding of Python source so that a rewrite is byte-lossless.

fissix works on ``str``; we decode the bytes ourselves (BOM, PEP 263 cookie) and encode the
result with the same codec, so encodings, CRLF and a missing final newline survive.
"""

from __future__ import annotations

import codecs
import io
import tokenize
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Optional


class UndecodableSource(ValueError):
    """The bytes are not text in the encoding the file declares (or UTF-8).

    ``line`` (1-based) is where the problem is, so the finding points a person at it.
    """

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class SourceText:
    """A decoded file: its text plus what is needed to write it back unchanged."""

    text: str
    encoding: str
    bom: bool
    newline: str
    #: Old Mac line endings: the file ends its lines with CR alone. ``text`` has them as LF
    #: (what the parser reads); :meth:`encode` writes them back as CR.
    cr_only: bool = False

    def encode(self, text: str) -> bytes:
        """Encode ``text`` (a rewrite of ``self.text``) exactly as the original was encoded."""
        data = (text.replace("\n", "\r") if self.cr_only else text).encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def decode_source(data: bytes) -> SourceText:
    """Decode Python source bytes per PEP 263 / BOM; raise UndecodableSource with a reason."""
    if b"\x00" in data:
        line = _line_at(data, data.index(b"\x00"))
        raise UndecodableSource(f"binary file (NUL byte on line {line})", line)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise UndecodableSource(str(exc)) from None
    bom = encoding == "utf-8-sig"
    body = data[len(codecs.BOM_UTF8):] if bom else data
    codec = "utf-8" if bom else encoding
    if not _ascii_compatible(codec):
        raise UndecodableSource(f"encoding {codec!r} is not ASCII-compatible, Python source "
                                "cannot use it: convert the file to UTF-8")
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as exc:
        line = _line_at(body, exc.start)
        raise UndecodableSource(
            f"not valid {codec} text: byte {body[exc.start]:#04x} on line {line} "
            f"(declare the file's encoding with a coding comment or convert it to UTF-8)",
            line,
        ) from None
    except (LookupError, UnicodeError) as exc:  # a binary codec (hex), a broken one (punycode)
        raise UndecodableSource(f"unusable encoding {codec!r}: {exc}") from None
    cr_only = "\r" in text and "\n" not in text  # Python reads it: so do we, as LF
    if cr_only:
        text = text.replace("\r", "\n")
    source = SourceText(text=text, encoding=codec, bom=bom, newline=detect_newline(text), cr_only=cr_only)
    if not _round_trips(source, data):  # a rewrite is written back with the same codec
        raise UndecodableSource(f"encoding {codec!r} does not round-trip (it spells some text "
                                "several ways): convert the file to UTF-8")
    return source


def source_text(data: Optional[bytes]) -> Optional[str]:
    """The text of ``data`` (:func:`decode_source`), or None for no data or data that does not
    decode: for a reader that only looks (the reason is reported where the file is processed)."""
    if data is None:
        return None
    try:
        return decode_source(data).text
    except UndecodableSource:
        return None


def _round_trips(source: SourceText, data: bytes) -> bool:
    try:
        return source.encode(source.text) == data
    except UnicodeError:
        return False


def _ascii_compatible(codec: str) -> bool:
    """Whether ``codec`` writes ASCII text as ASCII bytes (utf-16, hex, punycode do not)."""
    try:
        return "\n# x=1\t".encode(codec) == b"\n# x=1\t"
    except (LookupError, UnicodeError):
        return False


def detect_newline(text: str) -> str:
    """The line ending of the first line (what code we write into the file should use)."""
    index = text.find("\n")
    if index > 0 and text[index - 1] == "\r":
        return "\r\n"
    return "\n"


def _line_at(data: bytes, offset: int) -> int:
    """1-based line number of byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


@contextmanager
def user_code_warnings_off() -> Iterator[None]:
    """Python's warnings about the user's code while the tool parses and compile-checks it
    (``assert (x, "msg")``, ``x is 1``: SyntaxWarning; ``"\\d"``: a DeprecationWarning up to
    3.11, printed for a file named ``__main__.py``) are not printed: they are the user's
    linter's word, and would interleave with the tool's output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield
