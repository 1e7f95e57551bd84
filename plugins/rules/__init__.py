"""Built-in migration rules: one plugin module per rule of ``rules-sess-run.md``."""
