"""Rule packs as a unit: pack names wherever rules are named, the opt-in pack, the listing."""

from __future__ import annotations

import argparse
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from npu_codemod.orchestrator.arguments import rule_selection
from npu_codemod.orchestrator.cli import main as cli_main
from npu_codemod.orchestrator.config import ConfigError
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.manager import PluginError, PluginSpec, load_plugins, select_rules
from npu_codemod.plugins.packs import PACKS, UnknownRuleName, default_on, expand_rule_names

from support.cli import cli
from support.git import make_repo

BUILTIN = load_plugins().rules()
SESS_RUN = {f"NPU{n:03d}" for n in range(1, 11)}
ESTIMATOR = {"NPU011", "NPU012", "NPU013"}
MIXED_PRECISION = {"NPU031", "NPU032", "NPU033"}
XLA_GPU = {"NPU051", "NPU052", "NPU053", "NPU054", "NPU055"}  # NPU053-NPU055: beyond the spec (real GPU code)
DISTRIBUTED = {f"NPU02{n}" for n in range(1, 8)}
#: A third party's rule of the opt-in pack (the built-in distributed pack is another helper's).
OPT_IN_PLUGIN = '''
from npu_codemod.api import Rule, hookimpl


class HorovodInit(Rule):
    id = "ACME021"
    name = "acme-horovod-init"
    pack = "distributed"
    description = "Report hvd.init()."
    modules = ("horovod",)
    calls = ("horovod.tensorflow.init",)

    def visit_reference(self, reference, ctx):
        ctx.report(reference, "unmigrated", "initialise HCCL instead")


class Packless(Rule):
    id = "ACME001"
    name = "acme-packless"
    description = "A rule of no pack."


class OptIn(Rule):
    id = "ACME002"
    name = "acme-opt-in"
    description = "A rule of no pack that runs only when named."
    default_on = False


@hookimpl
def npu_codemod_rules():
    return [HorovodInit(), Packless(), OptIn()]
'''


@pytest.fixture
def plugin(tmp_path: Path) -> str:
    path = tmp_path / "acme_rules.py"
    path.write_text(OPT_IN_PLUGIN, encoding="utf-8")
    return str(path)


def ids(selection: RuleSelection) -> set[str]:
    return {rule.id for rule in load_rules(selection).rules}


def test_the_pack_table_is_the_specs():
    assert [(pack.name, pack.default_on) for pack in PACKS] == [
        ("sess-run", True), ("estimator", True), ("distributed", False), ("mixed-precision", True),
        ("keras", True), ("xla-gpu", True), ("audit", True), ("tf2", True),
        ("tf2-distributed", False)]
    by_pack = {}
    for rule in BUILTIN:
        by_pack.setdefault(rule.pack, set()).add(rule.id)
    assert by_pack["sess-run"] == SESS_RUN
    assert (by_pack["estimator"], by_pack["mixed-precision"], by_pack["xla-gpu"]) == (
        ESTIMATOR, MIXED_PRECISION, XLA_GPU)
    assert all(rule.pack in {pack.name for pack in PACKS} for rule in BUILTIN)


def test_a_pack_name_stands_for_all_its_rules():
    assert expand_rule_names(["estimator", "NPU004"], BUILTIN) == ESTIMATOR | {"NPU004"}
    assert expand_rule_names(["xla-gpu", "mixed-precision"], BUILTIN) == XLA_GPU | MIXED_PRECISION
    assert expand_rule_names(["default"], BUILTIN) == {rule.id for rule in BUILTIN if default_on(rule)}


def test_an_unknown_name_lists_the_packs():
    with pytest.raises(UnknownRuleName) as error:
        expand_rule_names(["estimators", "NPU999"], BUILTIN)
    assert str(error.value) == (
        "unknown rule id(s): NPU999, estimators (nor a pack: sess-run, estimator, distributed, "
        "mixed-precision, keras, xla-gpu, audit, tf2, tf2-distributed, default; see "
        "'npu-codemod rules')")
    with pytest.raises(PluginError, match="unknown rule id"):
        select_rules(BUILTIN, None, {"kears"})


def test_the_distributed_pack_is_off_unless_named(plugin: str):
    spec = PluginSpec(extra=(plugin,))
    assert "ACME021" not in ids(RuleSelection(plugins=spec))
    assert {"ACME001"} | SESS_RUN | ESTIMATOR <= ids(RuleSelection(plugins=spec))  # a rule of no pack is on
    assert ids(RuleSelection(plugins=spec, only=frozenset({"distributed"}))) == \
        {"ACME021", "NPU001"} | DISTRIBUTED
    assert ids(RuleSelection(plugins=spec, only=frozenset({"ACME021"}))) == {"ACME021", "NPU001"}
    assert "ACME021" in ids(RuleSelection(plugins=spec, only=frozenset({"default", "distributed"})))


def test_a_rule_may_opt_out_of_the_default_itself(plugin: str):
    spec = PluginSpec(extra=(plugin,))
    assert "ACME002" not in ids(RuleSelection(plugins=spec))
    assert "ACME002" not in ids(RuleSelection(plugins=spec, only=frozenset({"default"})))
    assert ids(RuleSelection(plugins=spec, only=frozenset({"ACME002"}))) == {"ACME002", "NPU001"}


def test_rules_selects_packs_and_disable_rule_drops_them():
    assert ids(RuleSelection(only=frozenset({"estimator"}))) == ESTIMATOR | {"NPU001"}
    default = ids(RuleSelection())
    assert ids(RuleSelection(disabled=frozenset({"xla-gpu", "NPU010"}))) == default - XLA_GPU - {"NPU010"}
    assert ids(RuleSelection(only=frozenset({"sess-run"}), disabled=frozenset({"sess-run"}))) == set()


def arguments(tmp_path: Path, config: str = "", **options) -> argparse.Namespace:
    """The parsed options of ``npu-codemod scan`` with the config file ``config`` next to the list."""
    (tmp_path / "repos.txt").write_text("repo\n")
    if config:
        (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
    defaults = {"command": "scan", "repos": str(tmp_path / "repos.txt"), "rules": None,
                "disable_rule": [], "plugin": [], "config": None}
    return argparse.Namespace(**{**defaults, **options})


def test_the_config_selects_rules_and_packs_like_the_command_line(tmp_path: Path):
    selection = rule_selection(arguments(tmp_path, '[tool.npu-codemod]\nrules = ["estimator", "NPU004"]\n'
                                                   'disable_rules = ["NPU013"]\n\n'
                                                   '[tool.npu-codemod.settings.NPU007]\nstyle = "helper"\n'))
    assert (selection.only, selection.disabled) == (frozenset({"estimator", "NPU004"}), frozenset({"NPU013"}))
    assert selection.settings == (("NPU007", '{"style": "helper"}'),)
    assert ids(selection) == {"NPU001", "NPU004", "NPU011", "NPU012"}


def test_the_command_line_wins_over_the_configs_rules_and_adds_to_its_disabled(tmp_path: Path):
    args = arguments(tmp_path, '[tool.npu-codemod]\nrules = ["estimator"]\ndisable_rules = ["NPU013"]\n',
                     rules="xla-gpu,NPU004", disable_rule=["NPU052"])
    selection = rule_selection(args)
    assert selection.only == frozenset({"xla-gpu", "NPU004"})
    assert selection.disabled == frozenset({"NPU013", "NPU052"})


def test_settings_keep_their_table_and_have_one_beside_a_list_of_rules(tmp_path: Path):
    table = '[tool.npu-codemod.rules.NPU007]\nstyle = "helper"\n'
    listed = ('[tool.npu-codemod]\nrules = ["sess-run"]\n\n'
              '[tool.npu-codemod.settings.NPU007]\nstyle = "helper"\n')
    for config in (table, listed):
        selection = rule_selection(arguments(tmp_path, config))
        assert selection.settings == (("NPU007", '{"style": "helper"}'),)


@pytest.mark.parametrize("config, message", [
    ('[tool.npu-codemod]\nrules = "estimator"\n',
     "[tool.npu-codemod] rules must be a list of rule ids or packs, or a table of settings tables, "
     "got 'estimator'"),
    ('[tool.npu-codemod]\nrules = ["estimator", 3]\n',
     "[tool.npu-codemod] rules must be a list of rule ids or packs, got ['estimator', 3]"),
    ('[tool.npu-codemod]\ndisable_rules = "keras"\n',
     "[tool.npu-codemod] disable_rules must be a list of rule ids or packs, got 'keras'"),
    ('[tool.npu-codemod.rules.NPU007]\nstyle = "helper"\n[tool.npu-codemod.settings.NPU007]\nstyle = "inline"\n',
     "settings of NPU007 given both in [tool.npu-codemod.rules.NPU007] and "
     "[tool.npu-codemod.settings.NPU007]: keep one"),
])
def test_a_malformed_rule_selection_in_the_config_is_one_line(tmp_path: Path, config: str, message: str):
    with pytest.raises(ConfigError) as error:
        rule_selection(arguments(tmp_path, config))
    assert str(error.value) == f"{tmp_path / 'pyproject.toml'}: {message}"


def rules_output(*options: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli_main(["rules", *options]) == 0
    return out.getvalue()


def test_rules_lists_each_rules_pack_and_whether_it_is_on_by_default(plugin: str):
    rows = {row["id"]: row for row in json.loads(rules_output("--format", "json", "--plugin", plugin))}
    assert {key: rows["NPU011"][key] for key in ("pack", "default_on", "default", "selected")} == {
        "pack": "estimator", "default_on": True, "default": "on", "selected": True}
    assert {key: rows["ACME021"][key] for key in ("pack", "default_on", "default", "selected")} == {
        "pack": "distributed", "default_on": False, "default": "off", "selected": False}
    assert (rows["ACME001"]["pack"], rows["ACME001"]["default"]) == ("", "on")
    assert (rows["ACME002"]["pack"], rows["ACME002"]["default"]) == ("", "off")
    table = rules_output("--plugin", plugin).splitlines()
    assert table[0].split() == ["ID", "NAME", "PACK", "DEFAULT", "STATUS", "PLUGIN", "DISTRIBUTION", "VERSION"]
    assert next(line for line in table if line.startswith("ACME021")).split()[:4] == [
        "ACME021", "acme-horovod-init", "distributed", "off"]
    assert next(line for line in table if line.startswith("NPU051")).split()[:4] == [
        "NPU051", "xla-off", "xla-gpu", "on"]


HOROVOD_SCRIPT = ("import tensorflow as tf\nimport horovod.tensorflow as hvd\n\nhvd.init()\n"
                  "tf.set_random_seed(hvd.rank())\n")
PARTIAL = "npu-codemod: warning: only part of the distributed pack is enabled"


@pytest.mark.parametrize("options, left_out", [
    (("--rules", "default,NPU022"), "NPU021, NPU023, NPU024, NPU025, NPU026, NPU027"),
    (("--rules", "default,distributed", "--disable-rule", "NPU024"), "NPU024"),
    (("--rules", "default,distributed"), None),
    ((), None),
])
def test_a_run_with_part_of_the_distributed_pack_warns_once_naming_the_rest(
        tmp_path: Path, options: tuple[str, ...], left_out: str) -> None:
    """NPU022 alone gives the ranks to the NPU while Horovod still launches the job: half a
    migration, which the run used to do with no word."""
    make_repo(tmp_path / "hvd", {"train.py": HOROVOD_SCRIPT})
    (tmp_path / "repos.txt").write_text("hvd\n")
    done = cli("run", "--repos", "repos.txt", "--no-progress", "--no-cache", "--jobs", "1", *options,
               cwd=tmp_path, expect=0)
    warnings = [line for line in done.stderr.splitlines() if line.startswith(PARTIAL)]
    if left_out is None:
        assert warnings == []
    else:
        (warning,) = warnings
        assert f"go together (the NPU's ranks, hooks or optimizer while Horovod or a tf.distribute " \
               f"strategy still runs the job is half a migration): also enable {left_out}, e.g. " \
               "--rules default,distributed" in warning
