"""What vaultsync asks of the operating system: atomic files, renames, the disk, the run lock, forked workers,
the programs a person configures."""
