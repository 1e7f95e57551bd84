"""Test environment: a writable fissix cache and a pinned git identity, never the user's; the
``calls_hook`` marker (:mod:`support.hooks`). The tests' helpers are in ``support/``."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

if "XDG_CACHE_HOME" not in os.environ:
    # A fissix grammar cache of this session's own, removed when the session ends.
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="npu-codemod-xdg-")
    atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)
for _key, _value in {
    "GIT_AUTHOR_NAME": "npu-codemod tests",
    "GIT_AUTHOR_EMAIL": "tests@npu-codemod.invalid",
    "GIT_COMMITTER_NAME": "npu-codemod tests",
    "GIT_COMMITTER_EMAIL": "tests@npu-codemod.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "NPU_CODEMOD_DISABLE_ENTRYPOINTS": "1",
}.items():
    os.environ[_key] = _value

# Property tests: the same examples on every run (stable CI), no example database in the repo.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("npu-codemod", derandomize=True, database=None, deadline=None)
_hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "npu-codemod"))

# @pytest.mark.calls_hook(...): the marked test fails unless it calls those hooks.
from support.hooks import pytest_configure, pytest_runtest_call  # noqa: E402, F401
