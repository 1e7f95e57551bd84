"""``@pytest.mark.calls_hook("npu_codemod_...", ...)``: a test that proves it calls plugin hooks.

While a marked test runs, every call of an npu-codemod hook is recorded with the plugins that
implement it (:mod:`support.hook_site.hook_log`): calls in the test's own process, and in every
Python process it starts (the CLI, its pool workers), since ``hook_site/`` is on
``PYTHONPATH`` meanwhile and its ``sitecustomize`` records there. The test then fails unless
each hook it names was called with an implementation that is not built in: one the test
brought, so the call went through the hook's contract (arguments by keyword, results combined),
not only through a built-in. ``tests/test_hookspecs.py`` checks that every hook of
``plugins/hookspecs.py`` is named by such a mark: a hook no test calls fails the suite, whatever
file mentions its name.

Calls made while fixtures are set up are not the test's: mark a test that calls in its body.
"""

from __future__ import annotations

import ast
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from npu_codemod.plugins import manager

from support.hook_site import hook_log

MARK = "calls_hook"
SITE = Path(hook_log.__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARK}(*hooks): the test calls these npu-codemod hooks "
                                       "with an implementation of its own (checked when it runs)")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    hooks = [hook for mark in item.iter_markers(MARK) for hook in mark.args]
    if not hooks:
        return (yield)
    with tempfile.TemporaryDirectory(prefix="npu-codemod-hooks-") as scratch:
        log = os.path.join(scratch, "calls.jsonl")
        with recording(log):
            result = yield
        calls = hook_log.read(log)
    missing = [hook for hook in hooks if not any(
        call["hook"] == hook and set(call["plugins"]) - set(manager.BUILTIN_PLUGINS) for call in calls)]
    if missing:
        called = sorted({call["hook"] for call in calls})
        pytest.fail(f"marked {MARK}({', '.join(map(repr, hooks))}), but never called {', '.join(missing)} with an "
                    f"implementation of its own (hooks called: {', '.join(called) or 'none'})",
                    pytrace=False)
    return result


@contextmanager
def recording(log: str) -> Iterator[None]:
    """Record hook calls into ``log`` here and in the Python processes started meanwhile."""
    saved = {name: os.environ.get(name) for name in (hook_log.LOG_ENV, "PYTHONPATH")}
    os.environ[hook_log.LOG_ENV] = log
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SITE), saved["PYTHONPATH"]]))
    undo = hook_log.install(manager, log)
    try:
        yield
    finally:
        undo()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def claims(tests: Path) -> dict[str, list[str]]:
    """Hook name -> the tests (``file::function``) of ``tests/test_*.py`` marked as calling it,
    read from the source: the marks of tests that are not selected in this session count too."""
    found: dict[str, list[str]] = {}
    for path in sorted(tests.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for hook in _marked_hooks(node.decorator_list):
                    found.setdefault(hook, []).append(f"{path.name}::{node.name}")
    return found


def _marked_hooks(decorators: list[ast.expr]) -> list[str]:
    """The string arguments of the ``pytest.mark.calls_hook(...)`` among ``decorators``."""
    return [arg.value for decorator in decorators if isinstance(decorator, ast.Call)
            and isinstance(decorator.func, ast.Attribute) and decorator.func.attr == MARK
            for arg in decorator.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
