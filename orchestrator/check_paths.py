"""Where ``npu-codemod check`` reads a repository from, and how it spells what it read.

The analysis keys every file from the repository's top, as ``run`` keys a clone's: module
names (``from nets import build_model`` is ``nets/__init__.py``), cross-file facts, pins and
scopes are all read from these keys. The top is the git work tree holding every path named
(a sub-folder of a repository is read as part of it: its pins and settings are the work
tree's), else the one folder named, else none: the paths are keys as named, as when ``check``
runs at the top. So ``check DIR`` from outside DIR, ``check /abs/DIR``, ``check ..`` and a
pre-commit hook's ``check FILE...`` read what ``check .`` reads at DIR's top.

What is printed is spelled from where ``check`` runs: :meth:`CheckPaths.shown` maps a key to
the path the user reads (a file as it was named or found; the repository itself, key ``""``,
at its top as named, ``proj`` or ``.``), and :meth:`CheckPaths.shown_text` maps the paths a
message names; ``ci_gate`` prints every key through them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

#: What may be a path in a message: a run of characters that are not spaces or punctuation
#: around a path (``(entry run.py)``, ``pin/tools/requirements.txt: tensorflow==2.9``).
_TOKEN = re.compile(r"""[^\s()\[\]{}<>,;:'"`]+""")


@dataclass(frozen=True)
class CheckPaths:
    """The paths named, the repository's top they are keyed from, and how keys are shown."""

    named: tuple[str, ...]
    top: Optional[str]  # absolute; None: no common top, the keys are the paths as named
    work_tree: bool  # the top is a git work tree: its pins and settings are the repository's
    spelled: Mapping[str, str] = field(default_factory=dict)  # key -> the path as found
    read: frozenset[str] = frozenset()  # the key of every file read (code, pins, settings)
    folders: frozenset[str] = frozenset()  # every folder ("a/b/") of a key read

    @classmethod
    def of(cls, paths: Sequence[str]) -> CheckPaths:
        """The top of ``paths``: the git work tree holding them all, else the one folder named."""
        absolute = [os.path.abspath(name) for name in paths]
        tree = _work_tree(absolute[0]) if absolute else None
        if tree is not None and all(_within(path, tree) for path in absolute):
            return cls(tuple(paths), tree, True)
        if len(paths) == 1 and os.path.isdir(absolute[0]):
            return cls(tuple(paths), absolute[0], False)
        return cls(tuple(paths), None, False)

    def key(self, path: str) -> str:
        """``path`` (as named or found) as a repository path: from the top, '/'-separated."""
        if self.top is None:
            return path
        return Path(os.path.relpath(os.path.abspath(path), self.top)).as_posix()

    def reading(self, found: Iterable[str], others: Iterable[str] = ()) -> CheckPaths:
        """These paths with the files ``found`` (as found: their spelling is kept) and the
        keys of the ``others`` read (pins, settings), whose folders a message may name."""
        spelled = {self.key(path): path for path in found}
        read = frozenset([*spelled, *others])
        folders = frozenset(key[:end + 1] for key in read for end, ch in enumerate(key) if ch == "/")
        return replace(self, spelled=spelled, read=read, folders=folders)

    def pinned_folders(self) -> list[str]:
        """The folders whose TensorFlow pins are read: the work tree's top, else the folders
        named (files alone, outside a work tree, have none)."""
        if self.work_tree and self.top is not None:
            return [self.top]
        return [name for name in self.named if os.path.isdir(name)]

    def settings_folders(self) -> list[str]:
        """The folders whose ``pyproject.toml`` holds the repository's settings, first first."""
        return [self.top] if self.top is not None else list(self.named)

    def tops(self) -> list[str]:
        """The keys (``a/b/``, ``""``) of the folders that are each a repository's top, whose
        pins make no scope of their own (``tf_scopes``): the top, else each folder named."""
        if self.top is not None:
            return [""]
        return [_folder_key(name) for name in self.named if os.path.isdir(name)]

    def shown(self, key: str) -> str:
        """The path a user reads for ``key``: a file read as it was named or found; anything
        else under the top (the repository itself: ``""`` or ``.``) under the top as it was
        named (``proj/requirements.txt``, ``proj``), else as absolute as the paths named or
        relative to where check runs (``../../requirements.txt`` from a folder two deep)."""
        if key in self.spelled:
            return self.spelled[key]
        if self.top is None:
            return key or "."
        path = os.path.join(self.top, key)
        named = [str(Path(name)) for name in self.named if os.path.abspath(name) == self.top]
        if named:
            path = os.path.join(named[0], key)
        elif not os.path.isabs(self.named[0]):
            path = os.path.relpath(path)
        shown = os.path.normpath(path)
        return shown + "/" if key.endswith("/") and shown != "." else shown

    def shown_text(self, text: str) -> str:
        """``text`` (a message) with each key it names, or path under a folder read, shown."""
        return _TOKEN.sub(lambda match: self._shown_token(match.group(0)), text) if self.top else text

    def _shown_token(self, token: str) -> str:
        body = token.rstrip(".")  # a path that ends a sentence
        if body in self.read or any(body[:end + 1] in self.folders for end, ch in enumerate(body) if ch == "/"):
            return self.shown(body) + token[len(body):]
        return token


def _work_tree(path: str) -> Optional[str]:
    """The top of the git work tree holding ``path`` (where ``.git`` is), or None."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _folder_key(name: str) -> str:
    return "" if str(Path(name)) == "." else str(Path(name)) + "/"
