"""Every note path ``GET /recall`` and ``GET /context`` answer exists in the vault: daily notes kept in date
sub-folders (``Daily/2026/11/2026-11-30.md``, as vault-format.md allows) are answered where they are, and a fact
the agent wrote since the last pass, whose note is not written yet, has no path rather than one leading nowhere."""

from __future__ import annotations

from fastapi.testclient import TestClient
from helpers.server import AUTH, TOKEN
from helpers.twoway import SARAH, Env

from vaultsync.app.recall import RecallOptions, recall
from vaultsync.names import daily_date
from vaultsync.server.http import create_app

QUESTIONS = ["silent pilot units Wi-Fi", "Sarah Chen Project Atlas", "emails from Acme Corp", "what happened today"]


def _in_year_folders(env: Env) -> set[str]:
    """The example's daily notes moved by the person into ``Daily/YYYY/MM/`` and committed, then a pass."""
    daily = env.vault / "Daily"
    moved = set()
    for note in sorted(daily.glob("*.md")):
        day = daily_date(note.name)
        if day is None:
            continue
        place = daily / f"{day.year}" / f"{day.month:02d}" / note.name
        place.parent.mkdir(parents=True, exist_ok=True)
        note.rename(place)
        moved.add(place.relative_to(env.vault).as_posix())
    env.git("add", "-A")
    env.git("commit", "-qm", "daily notes in year folders")
    assert env.sync().exit_code == 0
    return moved


def test_recall_and_context_answer_daily_notes_where_they_are(env: Env) -> None:
    moved = _in_year_folders(env)
    assert moved
    client = TestClient(create_app(env.cfg, TOKEN), base_url="http://127.0.0.1")
    answered, notes = [], []
    for q in QUESTIONS:
        r = client.get("/recall", params={"q": q, "limit": 50}, headers=AUTH)
        assert r.status_code == 200, r.text
        answered += r.json()["hits"]
        r = client.get("/context", params={"q": q, "budget": 50000}, headers=AUTH)
        assert r.status_code == 200, r.text
        answered += r.json()["hits"]
        notes += [e["note"] for e in r.json()["entities"]]
    assert notes and [n for n in notes if n is None or not (env.vault / n).is_file()] == []
    daily = [h["vault_path"] for h in answered if h["kind"] == "daily" and daily_date(h["path"].rsplit("/")[-1])]
    assert daily and set(daily) <= moved
    assert "Daily/2026/11/2026-11-30.md" in daily
    paths = [h["vault_path"] for h in answered]
    assert None not in paths and [p for p in paths if not (env.vault / p).is_file()] == []


def test_a_fact_with_no_note_yet_has_no_path(env: Env) -> None:
    env.agent_edit(SARAH, lambda facts: facts.append({"id": "sarah-chen-050", "fact": "Sarah Chen plays the oboe"}))
    [hit] = recall(env.cfg, "oboe", RecallOptions(kinds=("fact",))).hits
    assert hit.id == "sarah-chen-050" and hit.vault_path is None
    env.sync()
    [hit] = recall(env.cfg, "oboe", RecallOptions(kinds=("fact",))).hits
    assert hit.vault_path is not None and (env.vault / hit.vault_path).is_file()
