"""Credentials in every shape a URL carries them: masked wherever text is shown, and never on
git's command line (what ``ps`` shows every user), even for a URL git cannot use."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.orchestrator import redact
from npu_codemod.orchestrator.git.repository import GitError, clone_mirror
from npu_codemod.orchestrator.redact import mask_secrets

from support.sources import python_sources

SECRET = "P@ss-9c1e@x"


@pytest.mark.parametrize("text, masked", [
    (f"cannot clone http://user:{SECRET}@git.example/org/r.git: 403",
     "cannot clone http://***@git.example/org/r.git: 403"),
    ("GET https://api.example/v3/user?access_token=ghp_abc123&per_page=1 failed",
     "GET https://api.example/v3/user?access_token=***&per_page=1 failed"),
    ("https://gitlab.example/api/v4/projects?private_token=glpat-xyz", "https://gitlab.example/api/v4/projects?private_token=***"),
    ("see https://h/x?page=2&PRIVATE_TOKEN=zz#frag", "see https://h/x?page=2&PRIVATE_TOKEN=***#frag"),
    ("mail me at dev@example.com, path a@b", "mail me at dev@example.com, path a@b"),
])
def test_every_credential_shape_is_masked(text, masked):
    assert mask_secrets(text) == masked


@pytest.mark.parametrize("netloc", ["user:{s}@127.0.0.1:99999", "user:{s}@127.0.0.1:port", "user:{s}@[::1"])
def test_a_url_git_cannot_use_never_puts_its_credential_in_argv(tmp_path: Path, monkeypatch, netloc):
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))  # git writes every command line it runs there
    url = f"http://{netloc.format(s=SECRET)}/org/r.git"
    with pytest.raises(GitError) as info:
        clone_mirror(url, str(tmp_path / "clone"))
    assert SECRET not in str(info.value) and "***" in str(info.value)
    logged = trace.read_text()
    assert "clone" in logged  # git ran, and was told the URL without the credential
    assert SECRET not in logged and "P@ss" not in logged



_TOKEN_PIECES = st.sampled_from([
    "ghp_", "gho_", "ghx_", "github_pat_", "glpat-", "xoxb-", "xoxz-", "AKIA", "eyJ", "a" * 20, "Z9" * 5,
    "_", "-", ".", " ", "\n", "x", "é", "ǅ", "#", "=", "/", "AKIAZZZZ",
])


def _spares_only_texts_without_a_token(text: str) -> bool:
    """Where the look for a token's start finds none, the shapes' pattern finds none either."""
    return redact._TOKEN_STARTS.search(text) is not None or redact._TOKEN_SHAPES.search(text) is None


@settings(max_examples=1500, deadline=None)
@given(st.lists(_TOKEN_PIECES, max_size=10).map("".join))
def test_a_text_spared_the_token_shapes_holds_none(text: str) -> None:
    assert _spares_only_texts_without_a_token(text)


def test_the_suites_sources_spared_the_token_shapes_hold_none() -> None:
    assert all(_spares_only_texts_without_a_token(text) for text in python_sources().values())


def test_token_shapes_in_real_text_are_masked() -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1"
    jwt = "eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl"
    assert mask_secrets(f"export GITHUB_TOKEN={token}\nauth: {jwt} ok") == "export GITHUB_TOKEN=***\nauth: *** ok"
    assert mask_secrets(f"xghp_{'a' * 22} is inside a word") == f"xghp_{'a' * 22} is inside a word"
