"""The command line: ``vaultsync`` and ``python -m vaultsync.cli``; ``main`` is the entry point."""

from vaultsync.cli.main import main

__all__ = ["main"]
