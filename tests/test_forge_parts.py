"""The pieces under ``--open-prs``: CODEOWNERS matching, remote URLs, forge choice, retry
waits, pacing, masking and the PR templates."""

from __future__ import annotations

import pytest

from npu_codemod.codemods.findings import Finding
from npu_codemod.orchestrator.prs.codeowners import owners_of, parse_codeowners
from npu_codemod.orchestrator.prs.forge import (
    ForgeError,
    forge_host,
    open_forge,
    reviewer_kind,
    slug_from_url,
)
from npu_codemod.orchestrator.prs.groups import grouper, slugify
from npu_codemod.orchestrator.prs.http import ApiClient, Response, RetryPolicy
from npu_codemod.orchestrator.prs.pacing import Pacer, parse_rate
from npu_codemod.orchestrator.prs.text import load_templates, pr_context
from npu_codemod.orchestrator.redact import add_secret, mask_secrets
from npu_codemod.orchestrator.run_record import RuleRecord
from npu_codemod.plugins.manager import load_plugins

CODEOWNERS = """\
# default owners
*                 @org/platform
*.md              @org/docs        # comments after a rule
/vision/          @org/vision
nlp/              @org/nlp
docs/*            @org/docs
**/logs           @alice
apps/**/deploy.py @bob ops@example.com
/unowned.py
[Section] @org/section
section/
"""


@pytest.mark.parametrize("path, owners", [
    ("train.py", ("@org/platform",)),
    ("README.md", ("@org/docs",)),
    ("vision/README.md", ("@org/vision",)),  # last match wins
    ("vision/models/net.py", ("@org/vision",)),
    ("src/vision/net.py", ("@org/platform",)),  # /vision/ is anchored at the root
    ("nlp/train.py", ("@org/nlp",)),
    ("lib/nlp/train.py", ("@org/nlp",)),  # a trailing slash alone does not anchor
    ("docs/intro.py", ("@org/docs",)),
    ("docs/build/conf.py", ("@org/platform",)),  # docs/* does not reach into subfolders
    ("a/b/logs/run.py", ("@alice",)),
    ("apps/web/x/deploy.py", ("@bob", "ops@example.com")),
    ("unowned.py", ()),  # a rule without owners removes them
    ("section/a.py", ("@org/section",)),  # GitLab: a section's default owners
])
def test_codeowners_last_match_wins_with_gitignore_patterns(path, owners):
    assert owners_of(parse_codeowners(CODEOWNERS), path) == owners


def test_groups_by_owner_and_by_directory():
    files = {".github/CODEOWNERS": "* @org/a\nnlp/ @org/b @carol\n"}
    by_owner = grouper("codeowners", files.get)
    assert by_owner("nlp/x.py").name == "org-b_carol" and by_owner("nlp/x.py").owners == ("@org/b", "@carol")
    assert grouper("codeowners", {}.get)("x.py").name == "unowned"
    assert [grouper("directory", files.get)(p).name for p in ("x.py", "Vision Models/a.py")] == ["root", "vision-models"]
    assert slugify("@Org/Team..lock") == "org-team"


@pytest.mark.parametrize("url, host, slug", [
    ("https://github.com/org/repo.git", "github.com", "org/repo"),
    ("https://user:secret@gitlab.example.com/group/sub/proj", "gitlab.example.com", "sub/proj"),
    ("git@github.example.com:org/repo.git", "github.example.com", "org/repo"),
    ("ssh://git@gitlab.com:2222/org/repo.git", "gitlab.com", "org/repo"),
    ("file:///srv/git/org/repo.git", "", "org/repo"),
])
def test_remote_urls_give_host_and_owner_name(url, host, slug):
    assert (forge_host(url), slug_from_url(url)) == (host, slug)


def test_a_remote_without_owner_asks_for_a_slug():
    with pytest.raises(ForgeError, match="add slug=owner/name"):
        slug_from_url("https://host/repo.git")


def test_the_forge_is_inferred_from_the_host_or_named():
    hook = load_plugins().pm.hook
    github = open_forge(hook, None, "git@github.com:o/r.git", None, "t", "o/r")
    assert (github.name, github.api.base_url) == ("github", "https://api.github.com")
    ghe = open_forge(hook, None, "https://github.corp.example/o/r", None, "t", "o/r")
    assert ghe.api.base_url == "https://github.corp.example/api/v3"
    gitlab = open_forge(hook, None, "https://gitlab.corp.example/g/r", None, "t", "g/r")
    assert (gitlab.name, gitlab.api.base_url) == ("gitlab", "https://gitlab.corp.example/api/v4")
    named = open_forge(hook, "gitlab", "file:///x/g/r.git", "http://127.0.0.1:1/api/v4/", "t", "g/r")
    assert named.api.base_url == "http://127.0.0.1:1/api/v4"
    with pytest.raises(ForgeError, match="pass --forge github|gitlab"):
        open_forge(hook, None, "https://git.example/o/r", None, "t", "o/r")
    with pytest.raises(ForgeError, match="no forge plugin answers to --forge gitea"):
        open_forge(hook, "gitea", "https://git.example/o/r", None, "t", "o/r")


def test_reviewer_kinds():
    assert [reviewer_kind(r) for r in ("@alice", "bob", "@org/team", "a@b.example")] == [
        ("user", "alice"), ("user", "bob"), ("team", "org/team"), ("email", "a@b.example")]


def _client(policy: "RetryPolicy | None" = None):
    return ApiClient("http://127.0.0.1:9", {}, policy or RetryPolicy(), sleep=lambda s: None, clock=lambda: 1000.0)


@pytest.mark.parametrize("status, headers, attempt, wait", [
    (429, {"retry-after": "7"}, 1, 7.0),
    (403, {"retry-after": "Thu, 01 Jan 1970 00:16:50 GMT"}, 1, 10.0),  # an HTTP date: 1010 - 1000
    (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1010"}, 1, 11.0),
    (429, {"ratelimit-remaining": "0", "ratelimit-reset": "1004"}, 1, 5.0),  # GitLab's names
    (403, {}, 1, None),  # a plain refusal: no retry
    (502, {}, 2, 2.0),  # backoff doubles
    (0, {}, 1, 1.0),  # unreachable
    (429, {"retry-after": "3600"}, 1, None),  # longer than max_wait: give up, say why
    (429, {"retry-after": "1"}, 4, None),  # attempts used up
    (422, {}, 1, None),
])
def test_retry_waits_follow_the_forges_headers_and_are_bounded(status, headers, attempt, wait):
    assert _client()._retry_wait(Response(status, headers, None), attempt) == wait


def test_unreachable_forge_is_one_sentence_after_bounded_retries():
    waits = []
    client = ApiClient("http://user:pw@127.0.0.1:9", {}, RetryPolicy(attempts=2), sleep=waits.append,
                       log=lambda line: None)
    with pytest.raises(ForgeError, match=r"^GET http://\*\*\*@127.0.0.1:9/x: cannot reach") as info:
        client.request("GET", "/x")
    assert waits == [1.0] and "pw" not in str(info.value)


def test_pr_rate_and_pacing():
    assert (parse_rate("30/min"), parse_rate("2/s"), parse_rate("60"), parse_rate("0")) == (2.0, 0.5, 1.0, None)
    with pytest.raises(ValueError, match="expected N/min"):
        parse_rate("lots")
    now, slept = [100.0], []
    pacer = Pacer(2.0, sleep=lambda s: (slept.append(s), now.__setitem__(0, now[0] + s)), clock=lambda: now[0])
    pacer.wait()
    now[0] += 0.5
    pacer.wait()
    assert slept == [1.5]  # the first write does not wait


def test_registered_secrets_are_masked_everywhere():
    add_secret("s3cr3t-value")
    assert mask_secrets("Authorization: Bearer s3cr3t-value at https://u:p@h/x") == \
        "Authorization: Bearer *** at https://***@h/x"


def test_default_body_lists_migrated_unmigrated_with_links_and_guide_sections():
    findings = [Finding("r", "a.py", 3, 0, "NPU002", "dataset-batch-drop-remainder", "migrated", "ok"),
                Finding("r", "b|c.py", 9, 4, "NPU003", "predict-last-batch", "unmigrated", "pad the\nlast batch")]
    rules = {"NPU002": RuleRecord("NPU002", "dataset-batch-drop-remainder", description="drop it",
                                  guide_section="数据预处理", guide_section_en="Data preprocessing",
                                  guide_url="https://docs.example/rules.md#npu002"),
             "NPU003": RuleRecord("NPU003", "predict-last-batch", description="report", guide_section="推理")}
    context = pr_context("r", "o/r", "br", "main", findings, ["a.py"], rules, lambda p, line: f"https://x/{p}#L{line}")
    title, body = load_templates().render(context)
    assert title == "Migrate TensorFlow sess.run training code to Ascend NPU"
    assert "| NPU002 dataset-batch-drop-remainder | drop it | 1 |" in body
    assert "| [b\\|c.py:9](https://x/b|c.py#L9) | NPU003 predict-last-batch | pad the last batch |" in body
    assert ("- NPU002 dataset-batch-drop-remainder: [Data preprocessing (数据预处理)]"
            "(https://docs.example/rules.md#npu002)\n- NPU003 predict-last-batch: 推理\n") in body
    assert "Files changed on `br`: `a.py`." in body


def test_body_links_a_guide_only_through_http() -> None:
    findings = [Finding("r", "a.py", 3, 0, "MYL001", "mylib-dropout", "unmigrated", "do it")]
    rules = {"MYL001": RuleRecord("MYL001", "mylib-dropout", description="d", guide_url="javascript:alert(1)")}
    body = load_templates().render(pr_context("r", "o/r", "br", "main", findings, [], rules,
                                              lambda path, line: f"https://x/{path}#L{line}"))[1]
    assert "- MYL001 mylib-dropout: (no section)\n" in body and "javascript" not in body
