"""The one error the command line turns into a line on stderr and exit code 2."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user (an option, a file, a place that cannot be written): one line
    on stderr, exit code 2. Raised before any side effect where it can be."""
