"""``npu_codemod_forge``: built-ins infer GitHub/GitLab from the remote; a third party adds its own."""

from __future__ import annotations

import pytest

from npu_codemod.orchestrator.prs.forge import ForgeError, open_forge
from npu_codemod.plugins.manager import PluginSpec, load_plugins

GITEA_PLUGIN = """\
from npu_codemod.plugins.hookspecs import hookimpl


class Gitea:
    name = "gitea"

    def __init__(self, api_url, slug):
        self.api_url, self.slug = api_url, slug


@hookimpl
def npu_codemod_forge(name, remote_url, api_url, token, slug):
    if name == "gitea" or (name is None and "gitea." in remote_url):
        return Gitea(api_url or "https://gitea.example/api/v1", slug)
    return None
"""


@pytest.fixture
def hook(tmp_path):
    plugin = tmp_path / "gitea_forge.py"
    plugin.write_text(GITEA_PLUGIN)
    plugins = load_plugins(PluginSpec(extra=(str(plugin),)))
    assert not plugins.broken
    return plugins.pm.hook


@pytest.mark.parametrize("remote, expected", [
    ("https://github.com/org/repo.git", "github"),
    ("git@gitlab.com:group/repo.git", "gitlab"),
    ("https://gitea.example/org/repo.git", "gitea"),
])
def test_the_forge_is_inferred_from_the_remote(hook, remote, expected):
    forge = open_forge(hook, None, remote, None, None, "org/repo")
    assert forge.name == expected


@pytest.mark.calls_hook("npu_codemod_forge")
def test_a_third_party_forge_answers_to_its_own_name(hook):
    forge = open_forge(hook, "gitea", "file:///srv/org/repo.git", "http://127.0.0.1:1/api", None, "org/repo")
    assert forge.name == "gitea" and forge.api_url == "http://127.0.0.1:1/api"


def test_no_forge_answers_is_one_clear_error(hook):
    with pytest.raises(ForgeError, match="cannot tell the forge of file:///srv/org/repo.git"):
        open_forge(hook, None, "file:///srv/org/repo.git", None, None, "org/repo")
    with pytest.raises(ForgeError, match="no forge plugin answers to --forge bitbucket"):
        open_forge(hook, "bitbucket", "file:///srv/org/repo.git", None, None, "org/repo")
