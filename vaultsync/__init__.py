"""vaultsync: keep an agent's file memory and an Obsidian vault in step, with every change in git."""

__version__ = "0.1.0"
