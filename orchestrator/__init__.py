"""The batch: CLI, repo list, workspaces and git, per-repo pipeline, parallel runner."""
