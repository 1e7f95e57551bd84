"""A forge that misbehaves: redirects elsewhere, HTML or wrong-shaped JSON with a 200, error
pages, long Retry-After. Real HTTP on 127.0.0.1 (:mod:`support.hostile`), the real clients;
the token never leaves its origin and each bad answer is one line for one repository."""

from __future__ import annotations

import json

import pytest

from npu_codemod.orchestrator.prs.http import MAX_SILENT, ApiClient, ForgeError, RetryPolicy, _same_origin
from npu_codemod.plugins.forges.github import GitHub
from npu_codemod.plugins.forges.gitlab import GitLab

from support.cli import cli
from support.git import make_repo_with_remote
from support.hostile import serve_scripted, silent_listener

TOKEN = "tok-77aa01-hostile-never-show"
REPO = {"default_branch": "main", "html_url": "https://forge.example/org/alpha"}
TRAIN = "import tensorflow as tf\n\ndataset = tf.data.TFRecordDataset(files)\ndataset = dataset.batch(32)\n"
HTML = b"<html><body><h1>502 Bad Gateway</h1><p>upstream said: Authorization: Bearer leak</p></body></html>"


def test_a_redirect_to_another_origin_is_not_followed_and_gets_no_token():
    with serve_scripted() as forge, serve_scripted() as elsewhere:
        elsewhere.answer("/repos/org/alpha", 200, REPO)
        forge.answer("/repos/org/alpha", 302, {}, Location=f"{elsewhere.url}/repos/org/alpha")
        client = GitHub(forge.url, TOKEN, "org/alpha")
        with pytest.raises(ForgeError) as info:
            client.repository()
    assert elsewhere.seen == []
    message = str(info.value)
    assert message.startswith(f"GET {forge.url}/repos/org/alpha: HTTP 302: the forge redirected to "
                              f"http://127.0.0.1:{elsewhere.url.rsplit(':', 1)[1]}, another origin")
    assert "\n" not in message and TOKEN not in message


@pytest.mark.parametrize("url, target, same", [
    ("https://forge.example/api/v3", "http://forge.example/api/v3", False),  # https -> http: in clear
    ("https://forge.example/api/v3", "https://forge.example:443/x", True),
    ("http://127.0.0.1:8080/a", "http://127.0.0.1:8081/a", False),
    ("http://Forge.Example/a", "http://forge.example/b", True),
    ("https://forge.example/a", "https://forge.example.evil.test/a", False),
    ("https://forge.example/a", "http://[::1", False),  # not a URL at all
])
def test_the_origin_is_scheme_host_and_port(url, target, same):
    assert _same_origin(url, target) is same


def test_a_redirect_within_the_origin_is_followed_with_the_token():
    with serve_scripted() as forge:
        forge.answer("/repos/org/old", 301, {}, Location="/repos/org/alpha")
        forge.answer("/repos/org/alpha", 200, REPO)
        info = GitHub(forge.url, TOKEN, "org/old").repository()
    assert info.default_branch == "main"
    assert [(s.path, s.headers.get("Authorization")) for s in forge.seen] == [
        ("/repos/org/old", f"Bearer {TOKEN}"), ("/repos/org/alpha", f"Bearer {TOKEN}")]


def test_a_write_moved_with_a_302_is_not_replayed_as_a_get():
    with serve_scripted() as forge:
        forge.answer("/api/v4/projects/org%2Falpha/merge_requests", 302, {},
                     Location="/api/v4/projects/org%2Fbeta/merge_requests")
        client = GitLab(forge.url + "/api/v4", TOKEN, "org/alpha")
        with pytest.raises(ForgeError, match=r"HTTP 302: moved to http://127.0.0.1:\d+/api/v4/projects/"
                                             r"org%2Fbeta/merge_requests: set --forge-url"):
            client.create_pr("b", "main", "t", "body", False)
    assert [s.method for s in forge.seen] == ["POST"]


@pytest.mark.parametrize("body, said", [
    (b"<html><body>Sign in</body></html>", "a body that is not JSON (text/html), not JSON"),
    ([], "a list, not a JSON object"),
    ({"default_branch": "main"}, "an object with default_branch, not an object with html_url"),
])
def test_a_200_that_is_not_the_apis_answer_is_one_line(body, said):
    with serve_scripted() as forge:
        forge.answer("/repos/org/alpha", 200, body, Content_Type="text/html")
        with pytest.raises(ForgeError) as info:
            GitHub(forge.url, TOKEN, "org/alpha").repository()
    assert str(info.value) == f"GET {forge.url}/repos/org/alpha: HTTP 200 with {said} as the forge's API answers"


def test_an_html_error_page_is_never_copied_into_the_error():
    with serve_scripted() as forge:
        forge.answer("/x", 502, HTML, Content_Type="text/html")
        client = ApiClient(forge.url, {}, RetryPolicy(attempts=2), sleep=lambda s: None, log=lambda s: None)
        with pytest.raises(ForgeError) as info:
            client.request("GET", "/x")
    assert str(info.value) == f"GET {forge.url}/x: HTTP 502 (a body that is not JSON (text/html))"
    assert len(forge.seen) == 2  # a 502 is retried


def test_a_forge_answering_html_fails_each_pr_alone_and_the_run_writes_its_reports(tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_CODEMOD_TOKEN", TOKEN)
    for name in ("alpha", "beta"):
        make_repo_with_remote(tmp_path, name, {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("alpha\nbeta\n")
    with serve_scripted() as forge, serve_scripted() as elsewhere:
        forge.answer("/repos/org/alpha", 200, b"<html>maintenance</html>", Content_Type="text/html")
        forge.answer("/repos/org/beta", 307, {}, Location=f"{elsewhere.url}/repos/org/beta")
        done = cli("run", "--repos", "repos.txt", "--push", "--open-prs", "--forge", "github",
                   "--forge-url", forge.url, "--pr-rate", "0", "--jobs", "1", "--no-progress",
                   "--report-dir", "rep", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and elsewhere.seen == []
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    alpha, beta = run["repos"]
    assert alpha["pushed"] and beta["pushed"]
    assert alpha["pr_error"].endswith("HTTP 200 with a body that is not JSON (text/html), not JSON as "
                                      "the forge's API answers")
    assert "another origin" in beta["pr_error"]
    assert (tmp_path / "rep" / "report.html").exists()
    for path in tmp_path.rglob("*"):
        if path.is_file() and "remotes" not in path.parts:
            assert TOKEN.encode() not in path.read_bytes(), path
    assert TOKEN not in done.stdout + done.stderr


def test_a_silent_forge_is_given_up_for_the_whole_run_after_repeated_timeouts():
    """Each repository's client shares one back-off and one count of unanswered attempts:
    once the forge has not answered MAX_SILENT times, no later request waits for it."""
    waits: list[float] = []
    lines: list[str] = []
    with silent_listener() as port:
        clients = [ApiClient(f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {TOKEN}"},
                             RetryPolicy(attempts=3, timeout=0.2), sleep=waits.append, log=lines.append)
                   for _ in range(3)]  # one per repository
        errors = []
        for client in clients:
            with pytest.raises(ForgeError) as info:
                client.request("GET", "/repos/org/alpha")
            errors.append(str(info.value))
    # 3 attempts of the first repository's request, 1 of the second's: then no more
    assert [e.split(": ", 2)[1] for e in errors] == [f"cannot reach http://127.0.0.1:{port}"] * 2 + ["not sent"]
    assert errors[1].endswith(f"timed out; the forge gave no answer {MAX_SILENT} times in a row this run: "
                              "no more requests to it until the next run")
    assert errors[2].endswith(f"the forge gave no answer {MAX_SILENT} times in a row this run (timeouts or "
                              "refused connections); no more requests to it until the next run")
    assert waits == [1.0, 2.0, 4.0]  # one back-off, doubled across the two repositories
    assert [line.split(": ")[-1] for line in lines] == [
        "timed out; retrying in 1s", "timed out; retrying in 2s", "waiting 4s for the forge to answer again"]
    assert TOKEN not in " ".join(errors + lines)


def test_a_retry_after_over_the_cap_says_so():
    with serve_scripted() as forge:
        forge.answer("/repos/org/alpha", 429, {"message": "slow down"}, Retry_After="3600")
        client = ApiClient(forge.url, {}, RetryPolicy(), sleep=lambda s: None, log=lambda s: None)
        with pytest.raises(ForgeError) as info:
            client.request("GET", "/repos/org/alpha")
    assert str(info.value) == (f"GET {forge.url}/repos/org/alpha: HTTP 429: slow down; the forge asked "
                               "to retry after 3600s, longer than the 60s npu-codemod waits: rerun later")
    assert len(forge.seen) == 1


def test_status_with_wrong_shaped_answers_is_one_cell_per_pr(tmp_path, monkeypatch):
    from support.forge import serve

    monkeypatch.setenv("NPU_CODEMOD_TOKEN", TOKEN)
    make_repo_with_remote(tmp_path, "alpha", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("alpha\n")
    github, server = serve("github", TOKEN)
    try:
        cli("run", "--repos", "repos.txt", "--push", "--open-prs", "--forge", "github", "--forge-url",
            github.url, "--pr-rate", "0", "--no-progress", "--report-dir", "rep", cwd=tmp_path, expect=0)
    finally:
        server.shutdown()
    with serve_scripted() as forge:
        forge.answer("/repos/org/alpha/pulls/1", 200, {"state": "open", "head": "c0ffee01"})  # head: no object
        done = cli("status", "rep/run.json", "--forge-url", forge.url, cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    [line] = [line for line in done.stdout.splitlines() if "#1" in line]
    assert line.split()[3:] == ["unknown", "the", "forge's", "pull", "request", "has", "no", "head", "commit",
                                "https://forge.example/org/alpha/pull/1"]
