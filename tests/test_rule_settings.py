"""Per-rule typed settings: ``[tool.npu-codemod]`` in pyproject.toml or ``--config FILE``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Optional

import pytest

from npu_codemod.codemods.rule import Rule
from npu_codemod.codemods.rule_settings import SettingsError, build_settings

from support.cli import cli
from support.git import make_repo

TRAIN = "import tensorflow as tf\nsess = tf.Session()\n"


@dataclass
class ExampleSettings:
    style: Literal["inline", "helper"] = "inline"
    mode: Optional[str] = None
    ratio: float = 0.5
    retries: int = 1
    strict: bool = False
    names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ValueError("retries must not be negative")


class Example(Rule):
    id = "TST100"
    name = "example"
    description = "has settings"
    Settings = ExampleSettings


def test_defaults_when_nothing_is_configured() -> None:
    assert Example().settings == ExampleSettings()


def test_a_section_builds_the_settings() -> None:
    built = build_settings(Example(), {"style": "helper", "mode": "x", "ratio": 1, "names": ["a"]})
    assert built == ExampleSettings(style="helper", mode="x", ratio=1, names=["a"])


@pytest.mark.parametrize("section, message", [
    ({"stlye": "helper"}, "unknown setting 'stlye' for rule TST100 "
                          "(known: style, mode, ratio, retries, strict, names)"),
    ({"style": "fancy"}, "setting 'style' of rule TST100 must be one of 'inline', 'helper', got 'fancy'"),
    ({"mode": 3}, "setting 'mode' of rule TST100 must be str or None, got 3"),
    ({"retries": True}, "setting 'retries' of rule TST100 must be int, got True"),
    ({"strict": "yes"}, "setting 'strict' of rule TST100 must be bool, got 'yes'"),
    ({"names": ["a", 1]}, "setting 'names' of rule TST100 must be a list of str, got ['a', 1]"),
    ({"retries": -1}, "rule TST100: retries must not be negative"),
])
def test_a_bad_key_or_value_is_one_clear_line(section: dict, message: str) -> None:
    with pytest.raises(SettingsError) as raised:
        build_settings(Example(), section)
    assert str(raised.value) == message


def test_a_rule_without_settings_refuses_a_section() -> None:
    class Plain(Rule):
        id, name, description = "TST101", "plain", "no settings"

    with pytest.raises(SettingsError, match="^rule TST101 takes no settings$"):
        build_settings(Plain(), {"x": 1})


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    make_repo(tmp_path / "alpha", {"train.py": TRAIN})
    make_repo(tmp_path / "beta", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("alpha\nbeta\n")
    return tmp_path


def migrated_text(workdir: Path) -> str:
    run = json.loads((workdir / "out" / "run.json").read_text())
    return "".join(repo["patch"] or "" for repo in run["repos"])


def test_pyproject_next_to_the_repo_list_reaches_the_workers(workdir: Path) -> None:
    (workdir / "pyproject.toml").write_text(
        '[tool.npu-codemod.rules.NPU007]\nprecision_mode = "allow_mix_precision"\n')
    done = cli("run", "--dry-run", "--repos", "repos.txt", "--report-dir", "out", "--no-progress",
               "-j", "2", cwd=workdir)
    assert done.returncode == 0, done.stderr
    patch = migrated_text(workdir)
    assert patch.count('+custom_op.parameter_map["precision_mode"].s = '
                       'tf.compat.as_bytes("allow_mix_precision")') == 2  # both repos, 2 workers
    run = json.loads((workdir / "out" / "run.json").read_text())
    settings = next(r["settings"] for r in run["rules"] if r["id"] == "NPU007")
    assert settings == {"precision_mode": "allow_mix_precision", "style": "inline"}


def test_config_option_wins_and_rules_shows_the_values(workdir: Path) -> None:
    (workdir / "pyproject.toml").write_text('[tool.npu-codemod.rules.NPU007]\nstyle = "bogus"\n')
    (workdir / "npu.toml").write_text('[tool.npu-codemod.rules.NPU007]\nstyle = "helper"\n')
    done = cli("run", "--dry-run", "--repos", "repos.txt", "--config", "npu.toml",
               "--report-dir", "out", "--no-progress", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert migrated_text(workdir).count("+sess = tf.Session(config=npu_config_proto("
                                        "config_proto=tf.ConfigProto()))") == 2
    listing = cli("rules", "--config", "npu.toml", cwd=workdir).stdout
    assert "setting style = 'helper': one of 'inline', 'helper' (default 'inline')" in listing


@pytest.mark.parametrize("config, message", [
    ('[tool.npu-codemod.rules.NPU007]\nstyle = "fancy"\n',
     "pyproject.toml: setting 'style' of rule NPU007 must be one of 'inline', 'helper', got 'fancy'"),
    ('[tool.npu-codemod.rules.NPU007]\nprecison_mode = "x"\n',
     "pyproject.toml: unknown setting 'precison_mode' for rule NPU007 (known: precision_mode, style)"),
    ('[tool.npu-codemod.rules.NPU007]\nprecision_mode = "x"\nstyle = "helper"\n',
     'pyproject.toml: rule NPU007: precision_mode needs style = "inline" '
     "(npu_config_proto() has no precision mode)"),
    ('[tool.npu-codemod.rules.NPU999]\nx = 1\n',
     "pyproject.toml: [tool.npu-codemod.rules.NPU999]: no such rule (see 'npu-codemod rules')"),
    ('[tool.npu-codemod.NPU007]\nstyle = "helper"\n',
     "pyproject.toml: unknown key [tool.npu-codemod.NPU007] (known: include_tests, rules, "
     "disable_rules, settings, verify, tensorflow; rule "
     "settings go in [tool.npu-codemod.rules.<RULE_ID>])"),
    ('[tool.npu-codemod]\ninclude_tests = "yes"\n',
     "pyproject.toml: [tool.npu-codemod] include_tests must be true or false, got 'yes'"),
    ('[tool.npu-codemod.rules]\nNPU007 = "helper"\n',
     "pyproject.toml: [tool.npu-codemod.rules] NPU007 must be a table of settings"),
    ("[tool.npu-codemod\n", "pyproject.toml: not valid TOML: "),
])
def test_a_bad_config_is_exit_2_with_one_line(workdir: Path, config: str, message: str) -> None:
    (workdir / "pyproject.toml").write_text(config)
    done = cli("scan", "--repos", "repos.txt", "--report-dir", "out", "--no-progress", cwd=workdir)
    assert done.returncode == 2
    assert done.stderr.startswith(f"npu-codemod: error: {message}")
    assert len(done.stderr.splitlines()) == 1


def test_a_config_file_must_exist_and_have_the_table(workdir: Path) -> None:
    missing = cli("rules", "--config", "nope.toml", cwd=workdir)
    assert (missing.returncode, missing.stderr) == (
        2, "npu-codemod: error: cannot read config 'nope.toml': No such file or directory\n")
    (workdir / "other.toml").write_text("[tool.black]\nline-length = 100\n")
    empty = cli("rules", "--config", "other.toml", cwd=workdir)
    assert (empty.returncode, empty.stderr) == (2, "npu-codemod: error: other.toml: no [tool.npu-codemod] table\n")


def test_a_pyproject_without_the_table_is_ignored(workdir: Path) -> None:
    (workdir / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    done = cli("scan", "--repos", "repos.txt", "--report-dir", "out", "--no-progress", cwd=workdir)
    assert done.returncode == 0, done.stderr
