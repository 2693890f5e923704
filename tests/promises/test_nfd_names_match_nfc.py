"""Names a sync app from macOS hands over decomposed (NFD, ``jose\\u0301``) are the same names as the composed ones
(NFC, ``josé``) the other side wrote: no fact is deleted and made anew, no key of a fact is dropped or added."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from helpers.twoway import Env

REL = "areas/people/josé"
FACTS = [
    {"id": "josé-001", "fact": "José likes tea", "category": "preference", "timestamp": "2026-11-01"},
    {"fact": "José has a cat named Émile", "category": "pets", "timestamp": "2026-11-02"},
]


def _decompose(root: Path) -> None:
    """Every name under ``root`` decomposed, deepest first, as a sync app delivering a macOS folder leaves it."""
    for path in sorted(root.rglob("*"), key=lambda p: -len(p.parts)):
        name = unicodedata.normalize("NFD", path.name)
        if name != path.name:
            path.rename(path.with_name(name))


def test_decomposed_names_keep_every_fact_and_key(env: Env) -> None:
    folder = env.life / REL
    folder.mkdir(parents=True)
    (folder / "summary.md").write_text("# José\n\nA friend from Lisbon.\n", encoding="utf-8")
    raw = (json.dumps(FACTS, indent=2, ensure_ascii=False) + "\n").encode()
    (folder / "items.json").write_bytes(raw)
    env.sync()
    _decompose(env.vault / "2 Areas")

    report = env.sync()

    assert report.exit_code == 0, report.to_json()
    assert not [c for c in report.changes if c.what in ("entity deleted", "new entity", "-fact", "+fact")]
    [moved] = [p for p in (env.life / "areas/people").iterdir() if unicodedata.normalize("NFC", p.name) == "josé"]
    assert (moved / "items.json").read_bytes() == raw
    assert "A friend from Lisbon." in (moved / "summary.md").read_text(encoding="utf-8")
    again = env.sync()
    assert again.files_written == 0 and not again.changes, again.to_json()
