"""The tests' own helpers, one module per question (``tests/`` is on ``sys.path`` under pytest).

- :mod:`support.git`: real git repositories: build, commit, add a bare remote, read back.
- :mod:`support.cli`: the real command line in a subprocess, and the ``run.json`` it wrote.
- :mod:`support.repo_state`: what a repository looks like to its user, before and after a run.
- :mod:`support.csvfiles`: reading the CSV reports.
- :mod:`support.reports`: a real run with every kind of outcome, and its page as a browser reads it.
- :mod:`support.rules`: golden before/after tests of rules given by id (``Golden``: one rule's
  cases; ``messages``: a rule's messages by site).
- :mod:`support.audit`: NPU100's expected messages and counts.
- :mod:`support.session_close`: NPU010's report on a session it cannot close.
- :mod:`support.packs`: the distributed and keras packs' rule ids, repository facts and golden
  cases (``pack_migrates``).
- :mod:`support.tf2_scripts`: real-code-shaped TF 2.x scripts, and NPU061's device init placed in
  one (``with_init``).
- :mod:`support.session_config`: the lines NPU007 writes, for the session-config rule tests.
- :mod:`support.goldens`: the corpus and sample projects with their frozen migrated copies.
- :mod:`support.trees`: fissix trees for tests of node helpers.
- :mod:`support.forge`: a fake GitHub/GitLab API; :mod:`support.git_http`: a git HTTP server.
- :mod:`support.hostile`: servers that misbehave: scripted HTTP answers, a silent TCP port.
- :mod:`support.pool_tasks`: tasks a spawned pool worker imports by name.
- :mod:`support.hooks`: the ``calls_hook`` marker: a test proves it calls a plugin hook.
- :mod:`support.sources`: every Python source the suite has (corpora, golden cases), to
  compare two readings of code.

Nothing here is a test module, and no test module is imported by another.
"""
