"""The plugin API is public: every hook is documented and has a test that calls it.

"Calls" is checked, not read off a file: a test marked ``@pytest.mark.calls_hook(hook)`` fails
unless, while it runs, npu-codemod calls ``hook`` with an implementation the test brought
(:mod:`support.hooks` records the calls, in the test's process and the ones it starts).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from npu_codemod.plugins import hookspecs

from support.hooks import MARK, claims

HOOKS = [name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction)
         if name.startswith("npu_codemod_")]
CALLERS = claims(Path(__file__).parent)


def test_the_hook_list_is_not_empty():
    assert "npu_codemod_rules" in HOOKS and len(HOOKS) >= 7


@pytest.mark.parametrize("hook", HOOKS)
def test_each_hook_is_documented_and_tested(hook: str):
    spec = getattr(hookspecs, hook)
    assert len(inspect.getdoc(spec) or "") > 80, f"{hook} needs a docstring saying what it gets and returns"
    assert CALLERS.get(hook), (f"no test calls {hook}: mark the one that does with "
                               f"@pytest.mark.{MARK}({hook!r}) (it then fails unless it calls the hook)")
