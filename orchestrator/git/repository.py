"""The one place that talks to git (through GitPython).

Files are read from git objects and commits are written as objects (blobs, the trees on the
changed paths, the commit; no index file), so the user's working tree, index and HEAD are
never touched and no worktree is left behind if the run is interrupted: the branch ref moves
only at the end, in one atomic update. Each repository costs two git processes: one
persistent ``cat-file --batch`` for every read and the final ``update-ref``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from io import BytesIO
from typing import Iterator, Mapping, Optional

import git
from git.exc import BadName, GitCommandError, InvalidGitRepositoryError, NoSuchPathError
from gitdb.base import IStream, OInfo
from gitdb.db import LooseObjectDB
from gitdb.util import hex_to_bin

from npu_codemod.codemods.tf_runtime import is_manifest
from npu_codemod.orchestrator.git.credentials import split_credentials
from npu_codemod.orchestrator.redact import mask_secrets

#: The program a push starts on the remote's side: never the repository's own
#: ``remote.<name>.receivepack`` (a local or ssh remote would run that command).
RECEIVE_PACK = "--receive-pack=git-receive-pack"
_SYMLINK_MODE = b"120000"
_LISTED_MODES = (b"100644", b"100755", _SYMLINK_MODE)  # regular files, symlinks
#: Jupyter's autosave copies (committed by mistake): never migrated nor reported (``check``
#: skips every dot folder).
AUTOSAVES = ".ipynb_checkpoints"
#: Never wait for a password or a host-key answer: a worker has no terminal. Never wait
#: forever for a remote that accepted the connection and went silent: over http(s), under
#: 1 KB/s for 60 s ends the transfer (``http.lowSpeedLimit``/``lowSpeedTime``; raise them with
#: ``GIT_HTTP_LOW_SPEED_LIMIT``/``GIT_HTTP_LOW_SPEED_TIME``); over ssh, 30 s to connect and
#: a minute of silence.
NON_INTERACTIVE = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_SSH_COMMAND": os.environ.get(
        "GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=30 -o ServerAliveInterval=15 "
        "-o ServerAliveCountMax=4"),
    "GIT_HTTP_LOW_SPEED_LIMIT": os.environ.get("GIT_HTTP_LOW_SPEED_LIMIT", "1000"),
    "GIT_HTTP_LOW_SPEED_TIME": os.environ.get("GIT_HTTP_LOW_SPEED_TIME", "60"),
}


#: Where git looks for hooks in every command this tool runs: a path that holds none (not a
#: folder at all, so nothing can ever be put there, and nothing to create or clean up, even
#: for a worker that is killed). The repository's ``.git/hooks`` and its own
#: ``core.hooksPath`` are never read: no ``reference-transaction`` on ``update-ref``, no
#: ``pre-push`` on ``push``.
NO_HOOKS = os.devnull


def _without_hooks(command: git.Git) -> git.Git:
    command.set_persistent_git_options(c=f"core.hooksPath={NO_HOOKS}")
    return command


class GitError(Exception):
    """A git problem, as one sentence a user can act on."""


class NoSuchRemote(GitError):
    """The repository has no remote of the name asked for (nothing can be pushed)."""


@dataclass(frozen=True)
class PyFile:
    path: str
    mode: str
    blob: str  # hex sha


class _ObjectDB(git.GitCmdObjectDB):
    """Reads through git's persistent ``cat-file``; writes loose objects in this process.

    GitPython's own ``store`` starts a ``git hash-object`` per object (each changed file, each
    changed folder's tree, the commit): that was the largest share of a repository's git time.
    gitdb writes the same loose object (temporary file, then rename), with no process.
    """

    def store(self, istream: IStream) -> IStream:
        return LooseObjectDB.store(self, istream)

    def info(self, binsha: bytes) -> OInfo:
        """Through ``cat-file --batch`` too: one git process per repository, not two (asked
        of commits and tags when refs are resolved, never of large blobs)."""
        hexsha, kind, size, _ = self._git.get_object_data(binsha.hex())
        return OInfo(hex_to_bin(hexsha), kind, size)


def open_repo(location: str) -> git.Repo:
    """The repository at a local path; a clear GitError when it is missing or not git."""
    if not os.path.exists(location):
        raise GitError(f"no such path: {location}")
    try:
        repo = git.Repo(location, odbt=_ObjectDB)
    except (InvalidGitRepositoryError, NoSuchPathError):
        raise GitError(f"not a git repository: {location}") from None
    _without_hooks(repo.git)
    top = top_dir(repo)
    if os.path.realpath(top) != os.path.realpath(location):
        raise GitError(f"not the top of a git repository: {location} (the repository is {top})")
    return repo


def resolve_commit(repo: git.Repo, ref: Optional[str]) -> str:
    """Hex sha of ``ref`` (default HEAD)."""
    try:
        return repo.commit(ref or "HEAD").hexsha
    except (BadName, ValueError, GitCommandError, OSError):  # OSError: cat-file quit at once
        refusal = git_refusal(repo)
        if refusal is not None:
            raise GitError(refusal) from None
        if ref is None or ref == "HEAD":
            raise GitError("the repository has no commits") from None
        raise GitError(f"base ref {ref!r} not found") from None


def git_refusal(repo: git.Repo) -> Optional[str]:
    """git's own refusal to work in ``repo`` (another user's: "dubious ownership"), or None.
    Asked only once a read has failed: it costs a git process."""
    try:
        repo.git.rev_parse("--git-dir")
    except GitCommandError as exc:
        reason = _stderr(exc)
        if "dubious ownership" in reason:
            reason += (f" (it belongs to another user: if you trust it, git config --global --add "
                       f"safe.directory {top_dir(repo)})")
        return f"git refuses the repository: {reason}"
    return None


def check_branch_name(branch: str, repo: Optional[git.Repo] = None) -> None:
    """GitError unless ``branch`` is a valid branch name (asked of git, once per run)."""
    try:
        (repo.git if repo is not None else git.Git()).check_ref_format("--branch", branch)
    except GitCommandError:
        raise GitError(f"{branch!r} is not a valid branch name") from None


def branch_tip(repo: git.Repo, branch: str) -> Optional[str]:
    try:
        return repo.commit(f"refs/heads/{branch}").hexsha
    except (BadName, ValueError, GitCommandError):
        return None


@dataclass(frozen=True)
class PythonListing:
    """The ``.py`` entries of a commit: regular files, and symlinks (never followed); its
    regular ``.ipynb`` notebooks (never migrated, reported); and the files that may pin
    TensorFlow (``tf_runtime.is_manifest``: requirements, setup...)."""

    files: list[PyFile]
    links: list[PyFile]
    notebooks: list[PyFile] = field(default_factory=list)
    manifests: list[PyFile] = field(default_factory=list)


def python_files(repo: git.Repo, commit: str) -> list[PyFile]:
    """Regular ``.py`` files of a commit (symlinks and submodules are never followed), in
    ``git ls-tree -r`` order, read through the repository's one ``cat-file`` process."""
    return python_listing(repo, commit).files


def python_listing(repo: git.Repo, commit: str) -> PythonListing:
    """:func:`python_files`, and the ``.py`` symlinks of the commit, from one walk."""
    listing = PythonListing([], [])
    _walk(repo.odb, repo.commit(commit).tree.binsha, "", listing)
    return listing


def _walk(odb: git.GitCmdObjectDB, tree: bytes, prefix: str, listing: PythonListing) -> None:
    data = odb.stream(tree).read()
    for mode, name, id_at in _entries(data):
        text = name.decode("utf-8", "surrogateescape")  # as GitPython decodes paths
        if mode == b"40000":
            if text != AUTOSAVES:
                _walk(odb, data[id_at:id_at + 20], f"{prefix}{text}/", listing)
        elif text.endswith(".py") and mode in _LISTED_MODES:
            found = listing.links if mode == _SYMLINK_MODE else listing.files
            found.append(PyFile(prefix + text, mode.decode(), data[id_at:id_at + 20].hex()))
        elif text.endswith(".ipynb") and mode in _LISTED_MODES and mode != _SYMLINK_MODE:
            listing.notebooks.append(PyFile(prefix + text, mode.decode(), data[id_at:id_at + 20].hex()))
        if mode in _LISTED_MODES[:2] and is_manifest(text):
            listing.manifests.append(PyFile(prefix + text, mode.decode(), data[id_at:id_at + 20].hex()))


def _entries(data: bytes) -> Iterator[tuple[bytes, bytes, int]]:
    """(mode, name, offset of the 20-byte id) of each entry of a tree object's bytes."""
    offset = 0
    while offset < len(data):
        space = data.index(b" ", offset)
        nul = data.index(b"\0", space)
        yield data[offset:space], data[space + 1:nul], nul + 1
        offset = nul + 21


def read_blobs(repo: git.Repo, files: list[PyFile]) -> Iterator[tuple[PyFile, bytes]]:
    """Contents of ``files`` through one persistent ``git cat-file --batch``."""
    for file in files:
        yield file, repo.odb.stream(bytes.fromhex(file.blob)).read()


def store_blob(repo: git.Repo, data: bytes) -> str:
    """Write ``data`` as a blob object; return its hex sha (safe from several processes)."""
    return repo.odb.store(IStream(git.Blob.type, len(data), BytesIO(data))).hexsha.decode()


def blob_id(data: bytes) -> str:
    """The id git gives ``data`` as a blob, without writing it (``--dry-run`` stores nothing)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def python_contents(repo: git.Repo, commit: str) -> dict[str, str]:
    """``{path: blob}`` of the regular ``.py`` files of ``commit``."""
    return {file.path: file.blob for file in python_files(repo, commit)}


def changed_paths(repo: git.Repo, base: str, commit: str) -> list[str]:
    """The paths ``commit`` changes since its merge base with ``base`` (``git diff base...commit``)."""
    try:
        out = repo.git.diff("--name-only", "-z", "--no-renames", f"{base}...{commit}")
    except GitCommandError as exc:
        raise GitError(f"cannot compare {commit[:12]} with {base[:12]}: {_stderr(exc)}") from None
    return [path for path in out.split("\0") if path]


def uncommitted_paths(repo: git.Repo, head: str) -> int:
    """How many ``.py`` files of the working tree or the index differ from commit ``head``
    (0: a bare repository, or no such change): work a branch built from commits leaves out.

    Read in this process (the index file, then a file's size and time, hashing it only when
    those differ from the index's), not with ``git status``: a repository costs no process more.
    """
    if repo.bare:
        return 0
    try:
        entries = git.IndexFile(repo).entries
    except Exception:  # no index yet, or one this GitPython cannot read: nothing to tell
        return 0
    committed = python_contents(repo, head)
    # Regular files only, as ``python_contents`` reads the commit: a committed symlink named
    # ``*.py`` is neither side's (the index holds its target, which is no work left out).
    indexed = {str(path): entry for (path, stage), entry in entries.items()
               if stage == 0 and str(path).endswith(".py") and stat.S_ISREG(entry.mode)}
    top = top_dir(repo)
    differ = [path for path, entry in indexed.items()
              if committed.get(path) != entry.hexsha or _worktree_differs(os.path.join(top, path), entry)]
    return len(set(committed) - set(indexed)) + len(differ)


def _worktree_differs(path: str, entry: git.IndexEntry) -> bool:
    """Whether the working tree's file at ``path`` is not the index's ``entry`` (deleted too)."""
    try:
        stat = os.lstat(path)
    except OSError:
        return True
    if stat.st_size == entry.size and int(stat.st_mtime) == entry.mtime[0]:
        return False
    if os.path.islink(path):
        return True
    with open(path, "rb") as handle:
        return blob_id(handle.read()) != entry.hexsha


def commit_blobs(
    repo: git.Repo,
    parent: str,
    blobs: Mapping[PyFile, str],
    message: str,
    tree_of: Optional[str] = None,
) -> str:
    """Write a commit on top of ``parent`` with ``blobs`` (hex shas) as the files' new
    contents; return its sha. Only the trees on the changed files' paths are rewritten (no
    index file at all, so the repository's own index is never involved). ``tree_of``: the
    commit whose files the others are (default ``parent``): a rerun's commit holds the base
    plus exactly this run's edits, whatever the branch held before.
    """
    parent_commit = repo.commit(parent)
    changes = {file.path.encode("utf-8", "surrogateescape"): bytes.fromhex(blob)
               for file, blob in blobs.items()}
    start = repo.commit(tree_of) if tree_of is not None else parent_commit
    tree = _tree_with(repo.odb, start.tree.binsha, changes)
    commit = git.Commit.create_from_tree(repo, tree.hex(), message,
                                         parent_commits=[parent_commit], head=False)
    return commit.hexsha


def _tree_with(odb: git.GitCmdObjectDB, tree: bytes, changes: Mapping[bytes, bytes]) -> bytes:
    """Id of the tree ``tree`` with the blobs at ``changes``' paths (relative to it) replaced.

    Entries are edited in place in the tree's own bytes: names, modes and order stay exactly
    as git wrote them, only the 20-byte ids change.
    """
    here: dict[bytes, bytes] = {}
    below: dict[bytes, dict[bytes, bytes]] = {}
    for path, blob in changes.items():
        head, slash, rest = path.partition(b"/")
        if slash:
            below.setdefault(head, {})[rest] = blob
        else:
            here[head] = blob
    data = bytearray(odb.stream(tree).read())
    found = 0
    for _, name, id_at in _entries(bytes(data)):
        if name in here:
            data[id_at:id_at + 20] = here[name]
        elif name in below:
            data[id_at:id_at + 20] = _tree_with(odb, bytes(data[id_at:id_at + 20]), below[name])
        else:
            continue
        found += 1
    if found != len(here) + len(below):
        raise GitError("a changed file is no longer in the tree it was read from")
    return odb.store(IStream(git.Tree.type, len(data), BytesIO(bytes(data)))).binsha


def top_dir(repo: git.Repo) -> str:
    """The repository's top folder: its working tree, or the git directory of a bare one."""
    return str(repo.working_tree_dir or repo.git_dir)


def is_ancestor(repo: git.Repo, ancestor: str, commit: str) -> bool:
    # GitPython annotates the revisions as Commit; `git merge-base --is-ancestor` takes any rev.
    return repo.is_ancestor(ancestor, commit)  # type: ignore[arg-type]


def messages_since(repo: git.Repo, since: str, until: str) -> list[str]:
    """Messages of the commits reachable from ``until`` but not from ``since``."""
    messages = (commit.message for commit in repo.iter_commits(f"{since}..{until}"))
    # GitPython decodes a message with the commit's encoding; bytes only where it could not.
    return [text if isinstance(text, str) else text.decode("utf-8", "replace") for text in messages]


def clone_mirror(url: str, path: str) -> None:
    """Bare clone of ``url`` at ``path`` whose branches are the remote's branches; its
    ``origin`` is ``url`` without credentials (see :mod:`credentials`)."""
    public, access = split_credentials(url)
    try:
        _without_hooks(git.Git()).clone("--bare", "--quiet", "--", public, path, env={**NON_INTERACTIVE, **access})
    except GitCommandError as exc:
        raise GitError(f"cannot clone {mask_secrets(url)}: {_stderr(exc)}") from None


def fetch_mirror(repo: git.Repo, url: str) -> None:
    """Bring a :func:`clone_mirror` up to date; a branch only we have is kept."""
    public, access = split_credentials(url)
    try:
        # Also drops credentials that a cache made by an older version kept in its config.
        repo.git.remote("set-url", "origin", public)
        repo.git.fetch("--quiet", "--force", "origin", "+refs/heads/*:refs/heads/*",
                       "+refs/tags/*:refs/tags/*", env={**NON_INTERACTIVE, **access})
    except GitCommandError as exc:
        raise GitError(f"cannot fetch {mask_secrets(url)}: {_stderr(exc)}") from None


def update_branch(repo: git.Repo, branch: str, new: str, old: Optional[str]) -> None:
    """Point ``branch`` at ``new`` only if it is still at ``old`` (None: must not exist).

    Never a branch that a worktree has checked out (the user's own, or one a killed run of
    an older tool left): its files would suddenly look changed against the moved branch.
    """
    where = checked_out_at(repo, branch)
    if where is not None:
        own = not repo.bare and os.path.realpath(where) == os.path.realpath(top_dir(repo))
        todo = ("check out another branch there" if own else "commit or discard the work there "
                "and remove that worktree (git worktree remove)")
        raise GitError(f"branch {branch} is checked out in the worktree {where}: {todo}, then rerun")
    expected = old or "0" * 40
    try:
        repo.git.update_ref(f"refs/heads/{branch}", new, expected, m="npu-codemod")
    except GitCommandError as exc:
        raise GitError(f"could not update branch {branch}: {_stderr(exc)}") from None


def checked_out_at(repo: git.Repo, branch: str) -> Optional[str]:
    """The worktree (path) that has ``branch`` checked out, or None.

    What ``git worktree list`` reports, read from the same files without starting git: the
    main worktree's ``HEAD`` (a bare repository has none checked out) and each linked
    worktree's ``worktrees/<name>/HEAD`` and ``gitdir``.
    """
    wanted = f"ref: refs/heads/{branch}"
    common = os.path.abspath(repo.common_dir)  # from a linked worktree: ".../.git/worktrees/x/../.."
    if not repo.bare and _read(os.path.join(common, "HEAD")) == wanted:
        return os.path.dirname(common) if os.path.basename(common) == ".git" else top_dir(repo)
    linked = os.path.join(common, "worktrees")
    for name in sorted(os.listdir(linked)) if os.path.isdir(linked) else ():
        if _read(os.path.join(linked, name, "HEAD")) == wanted:
            gitdir = _read(os.path.join(linked, name, "gitdir"))
            return os.path.dirname(gitdir) if gitdir else os.path.join(linked, name)
    return None


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _stderr(exc: GitCommandError) -> str:
    """git's reason: its ``fatal:``/``error:`` lines when it has some, else all it said."""
    text = (exc.stderr or str(exc)).strip().replace("stderr: ", "").strip("'\n ")
    lines = text.splitlines()
    reasons = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines
    return mask_secrets(" ".join(" ".join(reasons).split()))


def push_branch(repo: git.Repo, remote: str, branch: str, force: bool = False,
                access: Optional[Mapping[str, str]] = None) -> str:
    """Push ``refs/heads/<branch>`` to the same branch on ``remote``; return git's summary.
    ``access``: the environment carrying a cloned URL's credentials (:mod:`credentials`).

    ``force`` replaces a remote branch that is not an ancestor (a branch rebuilt on a new
    base); without it git refuses. Raises :class:`NoSuchRemote` when ``remote`` is not
    configured and :class:`GitError` with git's reason (credentials masked) when the push
    is rejected or fails.
    """
    if remote not in {r.name for r in repo.remotes}:
        raise NoSuchRemote(f"no remote named {remote!r}")
    refspec = f"{'+' if force else ''}refs/heads/{branch}:refs/heads/{branch}"
    try:
        out = repo.git.push("--porcelain", RECEIVE_PACK, remote, refspec,
                            env={**NON_INTERACTIVE, **(access or {})})
    except GitCommandError as exc:
        raise GitError(f"push to {remote} rejected: {_push_reason(exc)}") from None
    return _porcelain_summary(out) or "pushed"



def _push_reason(exc: GitCommandError) -> str:
    """The per-ref reason from ``--porcelain`` output (e.g. ``[rejected] (fetch first)``)."""
    return _porcelain_summary(exc.stdout or "", rejected_only=True) or _stderr(exc)


def _porcelain_summary(out: str, rejected_only: bool = False) -> Optional[str]:
    for line in out.replace("stdout: ", "").strip("'\n ").splitlines():
        fields = line.split("\t")
        if len(fields) >= 3 and (fields[0] == "!" or not rejected_only):
            return mask_secrets(" ".join(fields[2:]).strip())
    return None


def remote_url(repo: git.Repo, remote: str) -> Optional[str]:
    """The URL ``remote`` pushes to (credentials included: mask before showing), or None."""
    try:
        return repo.git.remote("get-url", "--push", remote).strip() or None
    except GitCommandError:
        return None


def read_file(repo: git.Repo, commit: str, path: str) -> Optional[bytes]:
    """The contents of ``path`` at ``commit``, or None when it is not a file there."""
    try:
        blob = repo.commit(commit).tree / path
    except KeyError:
        return None
    return blob.data_stream.read() if blob.type == "blob" else None
