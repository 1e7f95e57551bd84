"""The report page's compiled template is kept in the per-user cache: compiled once, then read,
and a cache that is stale, damaged or cannot be written never changes the page."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import pytest

from npu_codemod.reports import html_report
from npu_codemod.reports.template_cache import CompiledTemplates, compile_settings

from support.reports import make_run


@pytest.fixture(scope="module")
def run_record(tmp_path_factory: pytest.TempPathFactory) -> dict:
    report_dir = make_run(tmp_path_factory.mktemp("run"), command="scan")
    return json.loads((report_dir / "run.json").read_text(encoding="utf-8"))


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The page's template names Jinja compiles from here on, with the per-user cache in
    ``tmp_path/cache`` and the environment's in-memory templates forgotten (a new process)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    compiled: list[str] = []
    compile_source = html_report._ENV.compile

    def counted(source, name=None, filename=None, *args, **kwargs):
        compiled.append(name)
        return compile_source(source, name, filename, *args, **kwargs)

    monkeypatch.setattr(html_report._ENV, "compile", counted)
    html_report._ENV.cache.clear()
    yield compiled
    html_report._ENV.cache.clear()


def page(run: dict) -> str:
    """The page of ``run`` as a new process renders it (no template in memory)."""
    html_report._ENV.cache.clear()
    return "".join(html_report.render_html(run))


def test_the_page_is_compiled_once_then_read_from_the_per_user_cache(run_record, compiles, tmp_path) -> None:
    first = page(run_record)  # compiled: the pages read from the cache are this one, byte for byte
    assert compiles == ["report.html.j2"]
    assert [p.parent for p in (tmp_path / "cache").rglob("*.jinja")] == [tmp_path / "cache" / "npu-codemod" / "templates"]
    assert page(run_record) == first and page(run_record) == first
    assert compiles == ["report.html.j2"]


def test_a_damaged_cache_file_is_compiled_again(run_record, compiles, tmp_path) -> None:
    first = page(run_record)
    (cached,) = (tmp_path / "cache").rglob("*.jinja")
    for damage in (cached.read_bytes()[:100], b"", cached.read_bytes()[:20] + b"\x80garbage"):
        cached.write_bytes(damage)
        assert page(run_record) == first
    assert len(compiles) == 4


def test_a_cache_that_cannot_be_written_leaves_the_page_as_it_is(run_record, compiles, tmp_path, monkeypatch) -> None:
    first = page(run_record)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert page(run_record) == first and page(run_record) == first
    assert len(compiles) == 3 and blocked.read_text() == "a file where the cache folder would go"


def environment(source: str, cache: Path, **settings) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.DictLoader({"page.j2": source}), **settings)
    env.bytecode_cache = CompiledTemplates(env, cache)
    return env


def test_code_in_a_folder_others_may_write_to_is_never_run(run_record, compiles, tmp_path) -> None:
    """The compiled code is executed: a cache folder that is group- or world-writable (a shared
    ``XDG_CACHE_HOME`` another account could plant code in) is compiled around, not read."""
    first = page(run_record)
    folder = tmp_path / "cache" / "npu-codemod" / "templates"
    for mode in (0o777, 0o720, 0o702):
        folder.chmod(mode)
        assert page(run_record) == first
    assert compiles == ["report.html.j2"] * 4
    folder.chmod(0o700)
    assert page(run_record) == first and compiles == ["report.html.j2"] * 4  # read again


def test_an_edited_template_is_compiled_again(tmp_path: Path) -> None:
    assert environment("{{ x }} one", tmp_path).get_template("page.j2").render(x=1) == "1 one"
    assert environment("{{ x }} two", tmp_path).get_template("page.j2").render(x=1) == "1 two"


def test_an_environment_that_compiles_otherwise_does_not_read_the_others_code(tmp_path: Path) -> None:
    """Whitespace control is decided when the source is compiled: Jinja's own key (the
    template's name and source) would hand one environment's code to the other."""
    source = "{% if x %}\n  yes\n{% endif %}\nend"
    for _ in range(2):  # the second round reads both from the cache
        assert environment(source, tmp_path).get_template("page.j2").render(x=1) == "\n  yes\n\nend"
        trimmed = environment(source, tmp_path, trim_blocks=True, lstrip_blocks=True)
        assert trimmed.get_template("page.j2").render(x=1) == "  yes\nend"
        escaped = environment("{{ x }}", tmp_path, autoescape=True)
        assert escaped.get_template("page.j2").render(x="<b>") == "&lt;b&gt;"
        assert environment("{{ x }}", tmp_path).get_template("page.j2").render(x="<b>") == "<b>"
    assert len(list(tmp_path.glob("*.jinja"))) == 3  # one a setting: the first and last share it


def test_the_key_holds_jinjas_version_and_is_the_same_in_every_process(monkeypatch) -> None:
    env = jinja2.Environment(autoescape=jinja2.select_autoescape(), finalize=str.strip)
    settings = compile_settings(env)
    assert "0x" not in settings and "select_autoescape" in settings and jinja2.__version__ in settings
    assert compile_settings(jinja2.Environment(autoescape=jinja2.select_autoescape(), finalize=str.strip)) == settings
    monkeypatch.setattr(jinja2, "__version__", "99.0")
    assert compile_settings(env) != settings


def test_without_a_home_folder_a_scan_runs_with_no_cache_at_all(tmp_path: Path, monkeypatch) -> None:
    """No ``XDG_CACHE_HOME``, no ``HOME`` and no account entry (``Path.home()`` raises): with
    ``--workspace`` given the scan needs no per-user folder, so the page's template and the
    canary are simply not kept, as before they were."""
    from npu_codemod.orchestrator.cli import main

    from support.git import make_repo

    def no_home(cls):
        raise RuntimeError("Could not determine home directory.")

    make_repo(tmp_path / "repo", {"train.py": "import tensorflow as tf\nsess = tf.Session()\n"})
    (tmp_path / "repos.txt").write_text(f"{tmp_path / 'repo'}\n")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(Path, "home", classmethod(no_home))
    html_report._ENV.cache.clear()
    code = main(["scan", "--repos", str(tmp_path / "repos.txt"), "--jobs", "1", "--no-progress",
                 "--report-dir", str(tmp_path / "report"), "--workspace", str(tmp_path / "ws")])
    assert code == 0 and (tmp_path / "report" / "report.html").is_file()
