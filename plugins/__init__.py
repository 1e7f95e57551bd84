"""Plugins: the public hook specifications, the plugin manager, and the built-in rules."""
