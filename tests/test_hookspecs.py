"""The plugin API is public: every hook is documented and has a test of its own."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from npu_codemod.plugins import hookspecs

HOOKS = [name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction)
         if name.startswith("npu_codemod_")]
TESTS = Path(__file__).parent


def test_the_hook_list_is_not_empty():
    assert "npu_codemod_rules" in HOOKS and len(HOOKS) >= 7


@pytest.mark.parametrize("hook", HOOKS)
def test_each_hook_is_documented_and_tested(hook: str):
    spec = getattr(hookspecs, hook)
    assert len(inspect.getdoc(spec) or "") > 80, f"{hook} needs a docstring saying what it gets and returns"
    testers = [path.name for path in TESTS.glob("test_*.py")
               if path.name != Path(__file__).name and hook in path.read_text(encoding="utf-8")]
    assert testers, f"no test exercises {hook}"
