"""Tokens, in repo URLs or in the token environment variables, never reach the terminal, the
reports or run.json; and nothing from a repository becomes markup in the HTML report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from npu_codemod.orchestrator import redact

from support.git import make_repo
from support.git_http import serve_git
from support.reports import Page

URL_TOKEN = "urlT0ken-9f8e7d6c"
ENV_TOKENS = {"NPU_CODEMOD_TOKEN": "npuT0ken-1a2b3c4d", "GITHUB_TOKEN": "ghp_EnvT0ken5e6f7a8b",
              "GITLAB_TOKEN": "glpat-EnvT0ken9c0d"}
HOSTILE = "<img src=x onerror=alert(1)>"


def test_url_userinfo_and_env_tokens_are_masked(monkeypatch) -> None:
    for name, value in ENV_TOKENS.items():
        monkeypatch.setenv(name, value)
    text = f"git clone https://me:{URL_TOKEN}@host/r.git failed; token {ENV_TOKENS['GITHUB_TOKEN']}"
    assert redact.mask_secrets(text) == "git clone https://***@host/r.git failed; token ***"
    record = {"repos": [{"error": ENV_TOKENS["GITLAB_TOKEN"], "notes": (ENV_TOKENS["NPU_CODEMOD_TOKEN"],),
                         "line": 3}]}
    assert redact.mask_record(record) == {"repos": [{"error": "***", "notes": ("***",), "line": 3}]}


def test_short_env_values_are_not_treated_as_tokens(monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "x")
    assert redact.mask_secrets("six x's: xxxxxx") == "six x's: xxxxxx"


@pytest.fixture
def leaky_run(tmp_path: Path):
    """A run whose inputs carry every token: a URL with credentials, env tokens in a source
    line that becomes a finding, in a path that fails, and a repository name that is markup."""
    source = ("import tensorflow as tf\n"
              f"y = tf.nn.dropout(x, 0.5, noise_shape=[1, 4])  # {ENV_TOKENS['GITHUB_TOKEN']}\n")
    make_repo(tmp_path / "repo", {"train.py": source})
    (tmp_path / "repos.txt").write_text(
        "repo\n"
        f"https://me:{URL_TOKEN}@127.0.0.1:9/org/repo.git\n"
        f"missing-{ENV_TOKENS['GITLAB_TOKEN']}\n"
        f"{HOSTILE}\n")
    env = {**os.environ, **ENV_TOKENS, "GIT_TERMINAL_PROMPT": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "npu_codemod", "run", "--repos", "repos.txt", "--report-dir", "rep",
         "--workspace", "ws", "--jobs", "2"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    return tmp_path, done


def test_no_token_in_output_reports_or_run_json(leaky_run) -> None:
    root, done = leaky_run
    assert done.returncode == 1, done.stderr  # the URL, the missing and the hostile entries fail
    texts = {"stdout": done.stdout, "stderr": done.stderr}
    for path in (root / "rep").rglob("*"):
        if path.is_file():
            texts[str(path)] = path.read_text(encoding="utf-8", errors="replace")
    for path in (root / "ws").rglob("*"):  # clone cache names, locks
        texts[f"name {path}"] = str(path)
    for where, text in texts.items():
        for token in (URL_TOKEN, *ENV_TOKENS.values()):
            assert token not in text, (token, where)
    assert "https://***@127.0.0.1:9/org/repo.git" in done.stderr
    assert "missing-***" in done.stderr


def test_html_report_escapes_what_comes_from_repositories(leaky_run) -> None:
    root, _ = leaky_run
    html = (root / "rep" / "report.html").read_text(encoding="utf-8")
    page = Page(html)
    assert not [attrs for attrs in page.tags("img") if "onerror" in attrs]
    assert HOSTILE not in html
    assert any(HOSTILE in text for text in page.texts)  # shown, as text


def test_a_url_token_reaches_git_but_no_file_of_the_workspace(tmp_path: Path) -> None:
    """Clone, rerun (fetch) and push a private repository over HTTP with ``user:token@`` in the
    list: every request is authorised, and the clone cache's config holds no token."""
    work = make_repo(tmp_path / "work", {"train.py": "import tensorflow as tf\ny = tf.nn.dropout(x, 0.5)\n"})
    served = tmp_path / "served"
    served.mkdir()
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(served / "repo.git")], check=True)
    with serve_git(served, "me", URL_TOKEN) as server:
        entry = server.url.replace("http://", f"http://me:{URL_TOKEN}@") + "/repo.git"
        (tmp_path / "repos.txt").write_text(f"{entry}\n")
        for report in ("rep1", "rep2"):  # the second run fetches into the cache
            done = subprocess.run(
                [sys.executable, "-m", "npu_codemod", "run", "--repos", "repos.txt", "--report-dir",
                 report, "--workspace", "ws", "--push", "--no-progress"],
                cwd=tmp_path, capture_output=True, text=True, timeout=300,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
            assert done.returncode == 0, done.stderr
            assert URL_TOKEN not in done.stderr + done.stdout
        methods = {method for method, _, authorized in server.requests if authorized}
    assert methods == {"GET", "POST"} and all(ok for *_, ok in server.requests)  # never challenged
    branch = subprocess.run(["git", "rev-parse", "--verify", "-q", "refs/heads/npu-codemod/sess-run-to-npu"],
                            cwd=served / "repo.git", capture_output=True, text=True)
    assert branch.returncode == 0  # pushed with the token from the list
    leaks = [path for path in (tmp_path / "ws").rglob("*") if path.is_file()
             and URL_TOKEN.encode() in path.read_bytes()]
    assert leaks == []


def test_split_credentials_moves_only_http_userinfo_into_the_environment() -> None:
    from npu_codemod.orchestrator.git.credentials import split_credentials

    public, env = split_credentials("https://me:t%40k@[::1]:8443/org/r.git")
    assert public == "https://[::1]:8443/org/r.git"
    assert env[f"GIT_CONFIG_KEY_{int(env['GIT_CONFIG_COUNT']) - 1}"] == f"http.{public}.extraHeader"
    assert env[f"GIT_CONFIG_VALUE_{int(env['GIT_CONFIG_COUNT']) - 1}"] == \
        "Authorization: Basic bWU6dEBr"  # base64 of "me:t@k", unquoted
    for url in ("ssh://git@host/org/r.git", "https://host/org/r.git"):
        assert split_credentials(url) == (url, {})  # nothing to move
    public, env = split_credentials("https://me:x@host:port/r")  # git names the bad port itself
    assert public == "https://host:port/r" and env["GIT_CONFIG_COUNT"]
