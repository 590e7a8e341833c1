"""Runnable demos behind the console scripts and ``examples/``."""
