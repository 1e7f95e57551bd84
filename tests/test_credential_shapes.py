"""Credentials in every shape a URL carries them: masked wherever text is shown, and never on
git's command line (what ``ps`` shows every user), even for a URL git cannot use."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.orchestrator.git.repository import GitError, clone_mirror
from npu_codemod.orchestrator.redact import mask_secrets

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
