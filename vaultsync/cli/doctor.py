"""``vaultsync doctor``: the command line over ``app/doctor.py``; exit 0 only when every link is well."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from vaultsync.model import ExitCode

MARKS = {"ok": "ok  ", "fail": "FAIL", "skip": "skip"}


def add_command(sub: Any, common: argparse.ArgumentParser) -> None:
    doctor = sub.add_parser(
        "doctor", parents=[common], help="check every link from the config to the plugins; name the fix"
    )
    doctor.add_argument("--url", help="the API's address to check (default: the vault plugin's, else 127.0.0.1:8765)")
    doctor.add_argument("--json", action="store_true", help="print one JSON document")


def doctor_command(path: Path, args: argparse.Namespace) -> int:
    from vaultsync.api import diagnose

    found = diagnose(path, args.url)
    code = ExitCode.CLEAN if found.ok else ExitCode.CONFLICTS
    if args.json:
        print(json.dumps({**found.to_json(), "exit_code": int(code)}, indent=2))
        return code
    for check in found.checks:
        print(f"{MARKS[check.status]}  {check.name:<9} {check.detail}")
        if check.fix:
            print(f"      {'':<9} fix: {check.fix}")
    if not found.ok:
        first = next(c for c in found.checks if c.status == "fail")
        print(f"the first broken link is {first.name}; fix it, then run vaultsync doctor again", file=sys.stderr)
    return code
