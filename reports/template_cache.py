"""The report page's compiled template, kept between runs in the per-user cache.

Jinja compiles ``report.html.j2`` to Python on every run: about 40 ms of CPU, a fifth of
writing the reports, paid by every ``run``, ``scan`` and ``report``. Jinja's bytecode cache
keeps the compiled code instead, in ``$XDG_CACHE_HOME/npu-codemod/templates`` (else
``~/.cache/npu-codemod/templates``; never the user's folders or the report dir).

What the compiled code depends on is all in the check: Jinja stores the template source's
checksum and its own format and Python's version with the code and compiles again when any of
them differs; the file's name adds Jinja's version and every setting of the environment that
the compiler reads (delimiters, whitespace handling, autoescaping, extensions...), which
Jinja's own key leaves out. A cache that cannot be read or written is no cache: the template
is compiled, as without one, and the page is the same byte for byte. The compiled code is run,
so it is read only from a folder the user owns and no one else may write to.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Optional

import jinja2
from jinja2.bccache import Bucket

from npu_codemod.orchestrator.user_cache import start_up_cache

#: The environment's attributes the lexer and compiler read: two environments that agree on
#: them and on Jinja's version compile a source to the same code.
COMPILE_SETTINGS = (
    "block_start_string", "block_end_string", "variable_start_string", "variable_end_string",
    "comment_start_string", "comment_end_string", "line_statement_prefix", "line_comment_prefix",
    "trim_blocks", "lstrip_blocks", "newline_sequence", "keep_trailing_newline", "optimized",
    "autoescape", "finalize", "is_async",
)


class CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache, keyed by the environment too; read and write errors are misses."""

    def __init__(self, environment: jinja2.Environment, directory: Path) -> None:
        super().__init__(str(directory), "%s.jinja")
        self.settings = compile_settings(environment)

    def get_cache_key(self, name: str, filename: Optional[str] = None) -> str:
        return hashlib.sha256(f"{self.settings}\0{name}\0{filename}".encode()).hexdigest()

    def load_bytecode(self, bucket: Bucket) -> None:
        if not private_folder(Path(self.directory)):
            return  # code another user could have written is never run: compiled again
        try:
            super().load_bytecode(bucket)
        except Exception:  # unreadable, or damaged past what Jinja checks (its pickled checksum)
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:  # a read-only or full disk: the next run compiles again
            pass


def private_folder(folder: Path) -> bool:
    """Whether ``folder`` (the compiled templates', whose code a run executes) belongs to the
    user running and no one else may write to it: a cache under a shared ``XDG_CACHE_HOME``
    (``/tmp``) that another account made or opened is not read."""
    try:
        status = folder.stat()
    except OSError:
        return False
    return status.st_uid == os.getuid() and not status.st_mode & 0o022


def compile_settings(environment: jinja2.Environment) -> str:
    """Jinja's version and the settings that decide what ``environment`` compiles a source to."""
    values = [(name, _text(getattr(environment, name))) for name in COMPILE_SETTINGS]
    return repr((jinja2.__version__, values, sorted(environment.extensions)))


def _text(value: object) -> str:
    """A setting as text that is the same in every process (a function by its name, not its
    address: ``autoescape=select_autoescape(...)``, ``finalize``)."""
    if callable(value):
        return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', type(value).__qualname__)}"
    return repr(value)


def template_cache(environment: jinja2.Environment) -> Optional[CompiledTemplates]:
    """The cache of ``environment``'s compiled templates, in the per-user cache as it is now
    (``XDG_CACHE_HOME`` is read on each call); None where there is none."""
    folder = start_up_cache("templates")
    return CompiledTemplates(environment, folder) if folder is not None else None
