"""Tasks for tests/test_process_pool.py: importable by name, as a spawned worker needs."""

import sys


def loaded(module: str) -> bool:
    """Whether ``module`` is already imported in this (worker) process."""
    return module in sys.modules
