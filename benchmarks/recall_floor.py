"""How well auto-recall's relevance floor tells a message memory can answer from one it cannot: the OpenClaw
plugin's ``recallMinScore``, passed to ``GET /context`` as ``min_score``.

It syncs a copy of ``vault-example/`` (the memory every plugin test uses), asks ``context()`` for each message of
the labelled set ``benchmarks/data/recall_floor.json`` (questions about its people, dates and projects that should
recall; chit-chat, creative and general-knowledge requests that should not), and prints, for each candidate floor,
the precision and recall of "injected anything" and the share of recalling messages whose context holds the
expected text. The default is the floor with the best F1 (ties: the higher floor, fewer false injections).

Usage: ``.venv/bin/python benchmarks/recall_floor.py [--json]``. Quality, not speed: the numbers do not depend on
the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from vaultsync import config as configmod
from vaultsync.app.context import context

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "benchmarks" / "data" / "recall_floor.json"
FLOORS = (0.0, 1.0, 2.0, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 8.0)
PLUGIN_DEFAULT = 5.0  # plugins/openclaw's recallMinScore; this script says whether it is still the best


def synced_example(root: Path) -> Path:
    """A private copy of vault-example after its first pass; returns its config file."""
    shutil.copytree(ROOT / "vault-example", root / "mem")
    config = root / "config.toml"
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(root / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"}
    (root / "gitconfig").write_text("[user]\n\tname = bench\n\temail = bench@example.invalid\n", encoding="utf-8")
    vaultsync = [sys.executable, "-m", "vaultsync.cli"]
    mem = root / "mem"
    paths = ["--workspace", str(mem / "workspace"), "--life", str(mem / "life"), "--vault", str(root / "vault")]
    init = [*vaultsync, "init", *paths, "--config", str(config), "--yes"]
    for step in (init, [*vaultsync, "sync", "--config", str(config)]):
        subprocess.run(step, check=True, capture_output=True, env=env)
    return config


def measure(config: Path) -> list[dict[str, object]]:
    """For each labelled message: its label, the best related memory's score and whether it names an entity."""
    cfg = configmod.load(config)
    labelled = json.loads(LABELLED.read_text(encoding="utf-8"))
    cases = [(c["message"], c["expect"]) for c in labelled["recall"]] + [(m, None) for m in labelled["quiet"]]
    rows = []
    for message, expect in cases:
        answer = context(cfg, message)
        rows.append(
            {
                "message": message,
                "expect": expect,
                "named": bool(answer.entities),
                "entity_text": "\n".join(str(e.get("summary", "")) + str(e.get("facts", "")) for e in answer.entities)
                + " ".join(e["name"] for e in answer.entities),
                "hits": [(h["score"], h["text"]) for h in answer.hits],
            }
        )
    return rows


def score(rows: list[dict[str, object]], floor: float) -> dict[str, float]:
    """Precision and recall of "injected anything" at ``floor``, and how often the expected text was in it."""
    injected_right = injected_wrong = found = 0
    should = sum(1 for r in rows if r["expect"] is not None)
    for row in rows:
        kept = [text for s, text in row["hits"] if s >= floor]  # type: ignore[union-attr]
        injected = bool(row["named"] or kept)
        if row["expect"] is None:
            injected_wrong += injected
            continue
        injected_right += injected
        shown = str(row["entity_text"]) + "\n".join(kept)
        found += str(row["expect"]).lower() in shown.lower()
    precision = injected_right / (injected_right + injected_wrong) if injected_right + injected_wrong else 1.0
    recall = injected_right / should
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"floor": floor, "precision": precision, "recall": recall, "f1": f1, "expected_shown": found / should}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(synced_example(Path(tmp)))
    table = [score(rows, floor) for floor in sorted({*FLOORS, PLUGIN_DEFAULT})]
    best = max(table, key=lambda r: (round(r["f1"], 6), r["floor"]))
    if args.json:
        print(json.dumps({"table": table, "best": best["floor"], "plugin_default": PLUGIN_DEFAULT}, indent=2))
        return 0
    print(f"{'floor':>6} {'precision':>9} {'recall':>7} {'F1':>6} {'expected shown':>14}")
    for r in table:
        mark = "  <- plugin default" if r["floor"] == PLUGIN_DEFAULT else ""
        rates = f"{r['precision']:9.2f} {r['recall']:7.2f} {r['f1']:6.2f} {r['expected_shown']:14.2f}"
        print(f"{r['floor']:6.1f} {rates}{mark}")
    print(f"best F1 at floor {best['floor']}; plugin default {PLUGIN_DEFAULT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
