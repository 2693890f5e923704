"""Helpers the test modules share, imported as ``helpers.<name>`` (pytest puts ``tests/`` on the import path).

``REPO`` is the repository's top folder, so a test reads ``vault-example/``, ``templates/`` or ``docs/`` the same
way whichever folder of ``tests/`` it sits in.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
