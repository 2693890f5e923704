"""``python -m vaultsync.cli``: the command line without the installed script (cron lines, a venv's python)."""

import sys

from vaultsync.cli.main import main

sys.exit(main())
