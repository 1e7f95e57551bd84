"""The plugin API: hookspecs as a document, discovery order, fault isolation, ``rules`` listing."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pluggy
import pytest

from npu_codemod.plugins import hookspecs
from npu_codemod.plugins.manager import PluginSpec, load_plugins

from support.cli import cli
from support.csvfiles import read_csv
from support.git import make_repo

TRAIN = "import tensorflow as tf\nimport mylib\nh = mylib.dropout(h, 0.9)\nds = ds.batch(4)\n"

RULE_PLUGIN = '''
from npu_codemod.codemods.rule import Rule
from npu_codemod.plugins.hookspecs import hookimpl


class MylibDropout(Rule):
    id = "MYL001"
    name = "mylib-dropout"
    description = "mylib.dropout -> npu_ops.dropout"
    guide_url = "https://wiki.example/mylib"
    pattern = "power< 'mylib' trailer< '.' 'dropout' > trailer< '(' [any] ')' > >"

    def visit(self, node, capture, ctx):
        node.children[0].value = "npu_ops"
        ctx.report(node, "migrated", "replaced")
        ctx.report(node, "unmigrated", "check accuracy")


@hookimpl
def npu_codemod_rules():
    return [MylibDropout()]
'''


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def rules_json(*args: str, cwd: Path, env=None) -> list[dict]:
    return json.loads(cli("rules", "--format", "json", *args, cwd=cwd, env=env, expect=0).stdout)


@pytest.fixture
def repo_list(tmp_path: Path) -> Path:
    make_repo(tmp_path / "alpha", {"train.py": TRAIN})
    make_repo(tmp_path / "beta", {"net.py": TRAIN})
    repos = tmp_path / "repos.txt"
    repos.write_text("alpha\nbeta\n")
    return repos


# --- The hookspec module is the documented public API ---------------------------------------


HOOKS = [function for name, function in vars(hookspecs).items() if name.startswith("npu_codemod_")]


@pytest.mark.parametrize("spec", HOOKS, ids=lambda spec: spec.__name__)
def test_every_hook_is_typed_and_says_what_it_gets_returns_and_how_results_combine(spec) -> None:
    signature = inspect.signature(spec)
    assert all(p.annotation is not inspect.Parameter.empty for p in signature.parameters.values())
    assert signature.return_annotation is not inspect.Signature.empty
    doc = inspect.getdoc(spec)
    assert "Return" in doc
    assert all(f"``{name}``" in doc for name in signature.parameters), "every argument is described"
    firstresult = spec.npu_codemod_spec["firstresult"]
    assert ("First result wins" in doc) if firstresult else ("Collected" in doc)
    assert typing.get_type_hints(spec, vars(hookspecs) | _forward_refs())


def _forward_refs() -> dict:
    from npu_codemod.codemods.findings import Finding
    from npu_codemod.codemods.rule import Rule
    return {"Finding": Finding, "Rule": Rule, "Forge": object}


def test_check_pending_rejects_a_hook_implementation_without_a_spec() -> None:
    pm = load_plugins().pm

    class Typo:
        @hookspecs.hookimpl
        def npu_codemod_rulez(self):
            return []

    pm.register(Typo(), name="typo")
    try:
        with pytest.raises(pluggy.PluginValidationError, match="npu_codemod_rulez"):
            pm.check_pending()
    finally:
        pm.unregister(name="typo")


@pytest.mark.calls_hook("npu_codemod_analyze_file")
def test_hooks_are_called_with_keywords_and_implementations_take_a_subset(tmp_path: Path) -> None:
    plugin = write(tmp_path / "facts.py", "from npu_codemod.plugins.hookspecs import hookimpl\n"
                   "@hookimpl\ndef npu_codemod_analyze_file(text):\n"
                   "    return ['has-mylib'] if 'mylib' in text else None\n")
    plugins = load_plugins(PluginSpec(extra=(plugin,)))
    results, errors = plugins.call_each("npu_codemod_analyze_file", path="a.py", text="mylib")
    assert (plugin, ["has-mylib"]) in results and errors == []
    with pytest.raises(TypeError):
        plugins.pm.hook.npu_codemod_analyze_file("a.py", "mylib")  # positional: refused


# --- Discovery ---------------------------------------------------------------------------------


def make_installed_plugin(site: Path, module: str, text: str, dist: str = "acme-rules") -> None:
    """A distribution with an ``npu_codemod`` entry point, as pip would leave it (no pip here)."""
    (site / f"{module}.py").write_text(text)
    info = site / f"{dist.replace('-', '_')}-2.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 2.3\n")
    (info / "entry_points.txt").write_text(f"[npu_codemod]\nacme = {module}\n")


def entry_point_env(site: Path, disabled: bool) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "NPU_CODEMOD_DISABLE_ENTRYPOINTS"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    if disabled:
        env["NPU_CODEMOD_DISABLE_ENTRYPOINTS"] = "1"
    return env


def test_entry_points_load_after_builtins_and_before_plugin_option(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    make_installed_plugin(site, "acme_rules", RULE_PLUGIN)
    local = write(tmp_path / "local.py", RULE_PLUGIN.replace("MYL001", "LOC001"))
    order = subprocess.run(
        [sys.executable, "-c", "from npu_codemod.plugins.manager import *\n"
         f"p = load_plugins(PluginSpec(extra=({local!r},)))\n"
         "print([(i.source, i.distribution, i.version) for i in p.infos.values()])"],
        capture_output=True, text=True, env=entry_point_env(site, disabled=False), check=True)
    sources = eval(order.stdout)
    assert [s for s, _, _ in sources] == ["builtin"] * (len(sources) - 2) + ["entry point", "--plugin"]
    assert sources[-2][1:] == ("acme-rules", "2.3")

    rows = {row["id"]: row for row in rules_json("--plugin", local, cwd=tmp_path,
                                                 env=entry_point_env(site, disabled=False))}
    assert (rows["MYL001"]["plugin"], rows["MYL001"]["distribution"], rows["MYL001"]["version"]) \
        == ("acme", "acme-rules", "2.3")
    assert (rows["LOC001"]["plugin"], rows["LOC001"]["distribution"]) == (local, "(local)")


def test_disable_entrypoints_env_loads_only_builtins(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    make_installed_plugin(site, "acme_rules", RULE_PLUGIN)
    rows = rules_json(cwd=tmp_path, env=entry_point_env(site, disabled=True))
    assert {row["distribution"] for row in rows} == {"npu-codemod"}


def test_a_rule_id_clash_names_both_plugins(tmp_path: Path, repo_list: Path) -> None:
    first = write(tmp_path / "first.py", RULE_PLUGIN)
    second = write(tmp_path / "second.py", RULE_PLUGIN)
    done = cli("run", "--repos", str(repo_list), "--plugin", first, "--plugin", second, cwd=tmp_path)
    assert done.returncode == 2
    # In pluggy's call order: the plugin registered last is asked first.
    assert done.stderr.strip() == (f"npu-codemod: error: rule id MYL001 is defined by both "
                                   f"{second} and {first}")


# --- A third-party rule gets everything a built-in gets ---------------------------------------


@pytest.mark.calls_hook("npu_codemod_rules")
def test_third_party_rule_runs_with_builtins_and_reaches_every_report(tmp_path: Path, repo_list: Path) -> None:
    plugin = write(tmp_path / "mylib_rules.py", RULE_PLUGIN)
    done = cli("run", "--repos", str(repo_list), "--plugin", plugin, "--report-dir", "out",
               "--no-progress", "-j", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    migrated = subprocess.run(["git", "show", "npu-codemod/sess-run-to-npu:train.py"],
                              cwd=tmp_path / "alpha", capture_output=True, text=True).stdout
    assert "h = npu_ops.dropout(h, 0.9)" in migrated  # with NPU001's import and NPU002's edit
    assert migrated.startswith("from npu_bridge.npu_init import *\n")
    assert "ds.batch(4, drop_remainder=True)" in migrated
    out = tmp_path / "out"
    mine = [row for row in read_csv(out / "findings.csv") if row["rule_id"] == "MYL001"]
    assert [(r["repo"], r["line"], r["status"]) for r in mine] == [
        ("alpha", "3", "migrated"), ("alpha", "3", "unmigrated"),
        ("beta", "3", "migrated"), ("beta", "3", "unmigrated")]
    assert mine[1]["message"] == "check accuracy (guide: https://wiki.example/mylib)"
    # summary.csv counts sites per rule: the rule's two findings on line 3 are one site, left
    assert {(r["repo"], r["migrated"], r["unmigrated"]) for r in read_csv(out / "summary.csv")
            if r["rule_id"] == "MYL001"} == {("alpha", "0", "1"), ("beta", "0", "1")}
    run = json.loads((out / "run.json").read_text())
    rule = next(r for r in run["rules"] if r["id"] == "MYL001")
    assert (rule["plugin"], rule["distribution"], rule["guide_url"]) == \
        (plugin, "(local)", "https://wiki.example/mylib")
    assert "MYL001" in (out / "report.html").read_text()
    again = cli("run", "--repos", str(repo_list), "--plugin", plugin, "--report-dir", "out2",
                "--no-progress", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert {r["status"] for r in json.loads((tmp_path / "out2/run.json").read_text())["repos"]} \
        == {"unchanged"}  # idempotent: the second run adds no commit


def test_rules_and_disable_rule_select_third_party_rules(tmp_path: Path, repo_list: Path) -> None:
    plugin = write(tmp_path / "mylib_rules.py", RULE_PLUGIN)
    for option, expected in ((["--rules", "MYL001"], {"MYL001", "NPU001"}),
                             (["--disable-rule", "MYL001"], set())):
        cli("scan", "--repos", str(repo_list), "--plugin", plugin, "--report-dir", "o",
            "--no-progress", *option, cwd=tmp_path)
        ids = {r["rule_id"] for r in read_csv(tmp_path / "o" / "findings.csv")}
        assert ("MYL001" in ids) == ("MYL001" in expected)
        assert ("NPU002" in ids) == (option[0] == "--disable-rule")


def test_a_rule_that_writes_code_that_does_not_compile_leaves_the_file_alone(tmp_path: Path) -> None:
    plugin = write(tmp_path / "bad.py", RULE_PLUGIN.replace('"npu_ops"', '"npu ops"'))
    plugins = load_plugins(PluginSpec(extra=(plugin,)))
    from npu_codemod.codemods.engine import Engine
    outcome = Engine([r for r in plugins.rules() if r.id == "MYL001"]).process(TRAIN.encode(), "t.py")
    assert outcome.new_data is None
    assert [f.rule_id for f in outcome.findings if f.status == "error"] == ["NPU000"]


# --- Fault isolation ---------------------------------------------------------------------------


BROKEN = {
    "import": ("import mylib_internal\n", "import failed: ModuleNotFoundError: No module named 'mylib_internal'"),
    "exit": ("import sys\nsys.exit(3)\n", "import failed: SystemExit: 3"),
    "typo": ("from npu_codemod.plugins.hookspecs import hookimpl\n@hookimpl\ndef npu_codemod_rule():\n"
             "    return []\n", "registration failed: PluginValidationError: unknown hook 'npu_codemod_rule'"),
    "rules": ("from npu_codemod.plugins.hookspecs import hookimpl\n@hookimpl\ndef npu_codemod_rules():\n"
              "    raise RuntimeError('no licence server')\n",
              "npu_codemod_rules raised RuntimeError: no licence server"),
    "not-a-rule": ("from npu_codemod.plugins.hookspecs import hookimpl\n@hookimpl\n"
                   "def npu_codemod_rules():\n    return ['MYL001']\n",
                   "npu_codemod_rules returned 'MYL001', which is not a Rule instance"),
    "bad-pattern": (RULE_PLUGIN.replace("trailer< '(' [any] ')' > >", "trailer< '(' [any] ')' > "),
                    "npu_codemod_rules returned <MylibDropout MYL001> with a pattern that does not "
                    "compile: PatternSyntaxError"),
    "bad-calls": (RULE_PLUGIN.replace('    guide_url = "https://wiki.example/mylib"', '    guide_url = "https://wiki.example/mylib"\n    calls = "mylib.dropout"'),
                  "npu_codemod_rules returned <MylibDropout MYL001> with calls = 'mylib.dropout': "
                  "it must be a tuple of strings"),
    "bad-scope": (RULE_PLUGIN.replace('    guide_url = "https://wiki.example/mylib"', '    guide_url = "https://wiki.example/mylib"\n    _scope = "sites"'),
                  "npu_codemod_rules returned <MylibDropout MYL001> with _scope = 'sites': it must be "
                  "one of 'site', 'linked', 'module'"),
    "bad-site-names": (RULE_PLUGIN.replace('    guide_url = "https://wiki.example/mylib"', '    guide_url = "https://wiki.example/mylib"\n'
                                           '    def _site_names_for(self, facts):\n        return [1]'),
                       "npu_codemod_rules returned <MylibDropout MYL001> whose _site_names_for(facts) "
                       "gave (1,): it must give strings"),
}


@pytest.mark.parametrize("kind", BROKEN)
def test_a_broken_plugin_is_listed_with_its_reason(tmp_path: Path, kind: str) -> None:
    source, reason = BROKEN[kind]
    plugin = write(tmp_path / "broken.py", source)
    rows = rules_json("--plugin", plugin, cwd=tmp_path)
    broken = [row for row in rows if row["status"] == "broken"]
    assert [row["plugin"] for row in broken] == [plugin]
    assert broken[0]["description"].startswith(reason)  # pluggy's message goes on: "in plugin ..."
    assert {row["id"] for row in rows if row["status"] == "ok"} >= {"NPU001", "NPU002", "NPU004"}
    table = cli("rules", "--plugin", plugin, cwd=tmp_path)
    assert table.returncode == 0 and reason.split(":")[0] in table.stdout and "broken" in table.stdout


def test_a_plugin_whose_import_raises_does_not_stop_a_run(tmp_path: Path, repo_list: Path) -> None:
    broken = write(tmp_path / "broken.py", "raise ImportError('mylib_internal is not installed')\n")
    good = write(tmp_path / "mylib_rules.py", RULE_PLUGIN)
    done = cli("run", "--repos", str(repo_list), "--plugin", broken, "--plugin", good,
               "--report-dir", "out", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    reason = "import failed: ImportError: mylib_internal is not installed"
    assert f"npu-codemod: warning: plugin {broken} is broken: {reason}" in done.stderr
    rows = read_csv(tmp_path / "out" / "findings.csv")
    errors = [(r["repo"], r["rule_id"], r["rule_name"], r["status"]) for r in rows if r["rule_id"] == "PLUGIN"]
    assert errors == [("alpha", "PLUGIN", broken, "error"), ("beta", "PLUGIN", broken, "error")]
    assert next(r["message"] for r in rows if r["rule_id"] == "PLUGIN") == \
        f"plugin is broken, its rules did not run: {reason}"
    assert {"MYL001", "NPU002"} <= {r["rule_id"] for r in rows}  # NPU001's import line is no site
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert {p["name"]: p["status"] for p in run["plugins"]}[broken] == "broken"
    assert {r["rule_id"] for r in read_csv(tmp_path / "out" / "summary.csv")} >= {"PLUGIN", "MYL001"}
    assert "PLUGIN" in (tmp_path / "out" / "report.html").read_text()


def test_a_rule_that_crashes_on_a_file_costs_only_that_rule(tmp_path: Path, repo_list: Path) -> None:
    crashing = write(tmp_path / "crash.py", RULE_PLUGIN.replace(
        'node.children[0].value = "npu_ops"', 'raise KeyError("boom")'))
    done = cli("scan", "--repos", str(repo_list), "--plugin", crashing, "--report-dir", "out",
               "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = read_csv(tmp_path / "out" / "findings.csv")
    assert {(r["repo"], r["rule_id"], r["status"]) for r in rows if r["rule_id"] == "MYL001"} == \
        {("alpha", "MYL001", "error"), ("beta", "MYL001", "error")}
    assert "rule crashed: KeyError: 'boom'" in next(r["message"] for r in rows if r["rule_id"] == "MYL001")
    assert {"NPU002"} <= {r["rule_id"] for r in rows if r["status"] == "migrated"}


@pytest.mark.calls_hook("npu_codemod_analyze_file", "npu_codemod_finding", "npu_codemod_write_report")
def test_analysis_and_result_hooks_that_raise_are_isolated(tmp_path: Path, repo_list: Path) -> None:
    plugin = write(tmp_path / "noisy.py", "from npu_codemod.plugins.hookspecs import hookimpl\n"
                   "@hookimpl\ndef npu_codemod_analyze_file(path):\n    raise ValueError(path)\n"
                   "@hookimpl\ndef npu_codemod_finding(finding):\n    raise ValueError('x')\n"
                   "@hookimpl\ndef npu_codemod_write_report(report_dir):\n    raise OSError('disk')\n")
    done = cli("scan", "--repos", str(repo_list), "--plugin", plugin, "--report-dir", "out",
               "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(f"npu-codemod: warning: plugin {plugin}: npu_codemod_finding raised") == 1
    assert f"plugin {plugin}: npu_codemod_write_report raised OSError: disk" in done.stderr
    rows = read_csv(tmp_path / "out" / "findings.csv")
    assert [(r["repo"], r["path"], r["rule_id"]) for r in rows if r["rule_id"] == "PLUGIN"] == \
        [("alpha", "train.py", "PLUGIN"), ("beta", "net.py", "PLUGIN")]
    assert {"NPU002"} <= {r["rule_id"] for r in rows}


@pytest.mark.calls_hook("npu_codemod_add_options", "npu_codemod_repo_result")
def test_plugins_add_options_that_reach_the_result_hook(tmp_path: Path, repo_list: Path) -> None:
    plugin = write(tmp_path / "notify.py", "from pathlib import Path\n"
                   "from npu_codemod.plugins.hookspecs import hookimpl\n"
                   "@hookimpl\ndef npu_codemod_add_options(parser, command):\n"
                   "    if command in ('run', 'scan'):\n"
                   "        parser.add_argument('--notify-file', default=None)\n"
                   "@hookimpl\ndef npu_codemod_repo_result(result, options):\n"
                   "    with open(options.notify_file, 'a') as f:\n"
                   "        f.write(result['repo'] + ' ' + result['status'] + '\\n')\n")
    done = cli("scan", "--repos", str(repo_list), "--plugin", plugin, "--notify-file", "log.txt",
               "--report-dir", "out", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted((tmp_path / "log.txt").read_text().splitlines()) == ["alpha unchanged", "beta unchanged"]
    help_text = cli("run", "--help", "--plugin", plugin, cwd=tmp_path).stdout
    assert "--notify-file" in help_text


def test_a_plugin_option_that_clashes_marks_the_plugin_broken(tmp_path: Path) -> None:
    plugin = write(tmp_path / "clash.py", "from npu_codemod.plugins.hookspecs import hookimpl\n"
                   "@hookimpl\ndef npu_codemod_add_options(parser):\n    parser.add_argument('--format')\n")
    rows = rules_json("--plugin", plugin, cwd=tmp_path)
    assert [row["description"] for row in rows if row["plugin"] == plugin] == [
        "npu_codemod_add_options raised ArgumentError: argument --format: conflicting option "
        "string: --format"]


def test_plugin_option_takes_a_module_name(tmp_path: Path) -> None:
    (tmp_path / "company").mkdir()
    (tmp_path / "company" / "__init__.py").write_text("")
    (tmp_path / "company" / "npu_rules.py").write_text(RULE_PLUGIN)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    rows = {row["id"]: row for row in rules_json("--plugin", "company.npu_rules", cwd=tmp_path, env=env)}
    assert (rows["MYL001"]["plugin"], rows["MYL001"]["status"]) == ("company.npu_rules", "ok")
    for command in (["rules"], ["check", "."], ["scan", "--repos", "repos.txt"]):
        missing = cli(*command, "--plugin", "company.nope", cwd=tmp_path, env=env)
        assert (missing.returncode, missing.stdout) == (2, ""), missing.stderr
        assert missing.stderr == ("npu-codemod: error: --plugin company.nope: no such module "
                                  "(a typo? a package not installed?)\n")
    misspelt = cli("rules", "--plugin", "rules/mylib_rulez.py", cwd=tmp_path)
    assert (misspelt.returncode, misspelt.stderr) == (
        2, "npu-codemod: error: --plugin rules/mylib_rulez.py: no such plugin file\n")


def test_plugin_option_naming_a_file_that_is_not_python_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a plugin\n")
    rows = rules_json("--plugin", "notes.txt", cwd=tmp_path)
    assert [row["description"] for row in rows if row["status"] == "broken"] == [
        "import failed: ImportError: not a Python file: notes.txt"]


def test_implements_says_whether_any_plugin_implements_a_hook() -> None:
    plugins = load_plugins()
    assert plugins.implements("npu_codemod_rules")
    assert not plugins.implements("npu_codemod_finding")  # no built-in listens: nothing is built


def test_check_fails_when_a_plugin_is_broken(tmp_path: Path) -> None:
    """A CI gate must not go green when the company's rules did not run."""
    source, reason = BROKEN["bad-pattern"]
    plugin = write(tmp_path / "broken.py", source)
    (tmp_path / "train.py").write_text("import tensorflow as tf\nx = 1\n")
    clean = cli("check", "train.py", cwd=tmp_path)
    assert (clean.returncode, clean.stdout) == (0, ""), clean.stderr
    gated = cli("check", "train.py", "--plugin", plugin, cwd=tmp_path)
    assert gated.returncode == 2 and gated.stdout == ""
    assert gated.stderr.startswith(f"npu-codemod: warning: plugin {plugin} is broken: {reason}")
    assert "Traceback" not in gated.stderr


def test_a_plugin_with_a_bad_pattern_is_a_finding_per_repo_not_a_crash(
        tmp_path: Path, repo_list: Path) -> None:
    source, reason = BROKEN["bad-pattern"]
    plugin = write(tmp_path / "broken.py", source)
    done = cli("run", "--repos", str(repo_list), "--plugin", plugin, "--report-dir", "out",
               "--no-progress", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    rows = read_csv(tmp_path / "out" / "findings.csv")
    assert sorted((r["repo"], r["status"]) for r in rows if r["rule_id"] == "PLUGIN") == [
        ("alpha", "error"), ("beta", "error")]
    assert {"NPU002"} <= {r["rule_id"] for r in rows if r["status"] == "migrated"}


def test_a_crashing_rule_leaves_its_traceback_in_run_json_html_and_debug(
        tmp_path: Path, repo_list: Path) -> None:
    crashing = write(tmp_path / "crash.py", RULE_PLUGIN.replace(
        'node.children[0].value = "npu_ops"', 'raise KeyError("boom")'))
    line = next(number for number, text in enumerate(Path(crashing).read_text().splitlines(), 1)
                if "boom" in text)
    quiet = cli("scan", "--repos", str(repo_list), "--plugin", crashing, "--report-dir", "out",
                "--no-progress", cwd=tmp_path)
    assert quiet.returncode == 0 and "Traceback" not in quiet.stderr, quiet.stderr
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    crashes = [f for repo in run["repos"] for f in repo["findings"] if f["rule_id"] == "MYL001"]
    assert len(crashes) == 2
    assert crashes[0]["message"] == (f"rule crashed: KeyError: 'boom' (at crash.py:{line} in "
                                     "visit); the file was migrated without this rule")
    assert crashes[0]["trace"].startswith("Traceback (most recent call last):")
    assert f'{crashing}", line {line}, in visit' in crashes[0]["trace"]
    assert "traceback of the rule" in (tmp_path / "out" / "report.html").read_text()
    loud = cli("scan", "--repos", str(repo_list), "--plugin", crashing, "--report-dir", "out2",
               "--no-progress", "--debug", cwd=tmp_path)
    assert loud.returncode == 0
    assert loud.stderr.count("MYL001 crashed:\nTraceback (most recent call last):") == 2
    (tmp_path / "train.py").write_text(TRAIN)
    checked = cli("check", "train.py", "--plugin", crashing, "--debug", cwd=tmp_path)
    assert checked.returncode == 1
    assert "train.py:3: MYL001 crashed:\nTraceback" in checked.stderr


def test_hooks_are_called_in_pluggys_order_and_wrappers_are_refused(tmp_path: Path) -> None:
    def plugin(name: str, marker: str = "") -> str:
        return write(tmp_path / f"{name}.py", (
            "from npu_codemod.plugins.hookspecs import hookimpl\n"
            f"@hookimpl{marker}\n"
            "def npu_codemod_analyze_file(path, text):\n"
            f"    return None if path == 'none' else ['{name}']\n"))
    first = plugin("first", "(trylast=True)")
    second = plugin("second")
    third = plugin("third", "(tryfirst=True)")
    wrapper = write(tmp_path / "wrapper.py", (
        "from npu_codemod.plugins.hookspecs import hookimpl\n"
        "@hookimpl(hookwrapper=True)\n"
        "def npu_codemod_analyze_file(path, text):\n"
        "    yield\n"))
    plugins = load_plugins(PluginSpec(extra=(first, second, third, wrapper)))
    results, errors = plugins.call_each("npu_codemod_analyze_file", path="x.py", text="")
    third_party = [name for name, _ in results if name in (first, second, third)]
    assert third_party == [third, second, first]  # as pm.hook.npu_codemod_analyze_file would
    assert errors == [(wrapper, "npu_codemod_analyze_file is a hook wrapper: npu-codemod calls "
                                "each implementation on its own, so wrappers are not supported")]
    nothing, _ = plugins.call_each("npu_codemod_analyze_file", path="none", text="")
    assert [name for name, _ in nothing if name in (first, second, third)] == []


def test_a_rerun_with_a_broken_plugin_rebuilds_the_branch_without_its_edits(
        tmp_path: Path, repo_list: Path) -> None:
    """The documented choice (docs/plugins.md): the branch always equals what the report says.
    A rerun whose plugin broke rebuilds the files without that plugin's edits (a new commit on
    the branch) and every repository carries a PLUGIN finding saying its rules did not run."""
    good = write(tmp_path / "mylib_rules.py", RULE_PLUGIN)
    first = cli("run", "--repos", str(repo_list), "--plugin", good, "--report-dir", "one",
                "--no-progress", cwd=tmp_path)
    assert first.returncode == 0, first.stderr

    def branch_file() -> str:
        return subprocess.run(["git", "show", "npu-codemod/sess-run-to-npu:train.py"],
                              cwd=tmp_path / "alpha", check=True, capture_output=True,
                              text=True).stdout

    assert "npu_ops.dropout" in branch_file()
    write(tmp_path / "mylib_rules.py", "import mylib_internal  # the licence server is down\n")
    again = cli("run", "--repos", str(repo_list), "--plugin", good, "--report-dir", "two",
                "--no-progress", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "mylib.dropout(h, 0.9)" in branch_file()  # the branch agrees with the report
    rows = read_csv(tmp_path / "two" / "findings.csv")
    assert not [r for r in rows if r["rule_id"] == "MYL001"]
    assert [(r["repo"], r["status"]) for r in rows if r["rule_id"] == "PLUGIN"] == [
        ("alpha", "error"), ("beta", "error")]
