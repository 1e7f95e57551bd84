"""Readings of a repository's facts that rules make once per repository, not once per file."""

from __future__ import annotations


def test_session_and_config_functions_are_read_once_per_repository() -> None:
    """NPU010's and NPU007's readings of the repository's facts are made once per repository,
    not once per file (each read every fact of the repository: a monorepo's are many)."""
    from npu_codemod.plugins.rules.sess_run._config_functions import configured_functions
    from npu_codemod.plugins.rules.sess_run._session_functions import session_functions

    facts = frozenset({"npu007-config:lib.config.make", "npu007-config:lib.run.build=lib.config.make",
                       "npu010-session:lib.sessions.open#0"})
    assert configured_functions(facts) is configured_functions(frozenset(set(facts)))
    assert session_functions(facts) is session_functions(frozenset(set(facts)))
    found = configured_functions(facts)
    assert found.plain == {"lib.config.make"} and found.forwards == {"lib.run.build": {"lib.config.make"}}
    assert found.find("config.make", "lib/train.py") == "lib.config.make"
    assert found.find("run.build", "lib/train.py") == "lib.run.build"  # forwards a configured one
