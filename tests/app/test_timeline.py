"""Timeline.md: every fact by month, newest first, written by the weekly review. Deterministic (the same facts
give the same bytes, so an unchanged memory writes and commits nothing), and never read back into memory."""

from __future__ import annotations

import random

from helpers.e2e import git
from helpers.twoway import SARAH, SARAH_DIR, TODAY, Env

from vaultsync.app.review import review
from vaultsync.core.timeline import MARK, timeline


def flink(rel: str, fid: str) -> str:
    return f"[[{rel}/facts/{fid}|{fid}]]"


def elink(rel: str) -> str:
    return f"[[{rel}]]"


def test_months_newest_first_with_links_and_what_replaced_what() -> None:
    facts = [
        (
            "p/a",
            {
                "id": "a-1",
                "fact": "Lives in  Lyon",
                "timestamp": "2026-03-02",
                "status": "superseded",
                "supersededBy": "a-2",
            },
        ),
        ("p/a", {"id": "a-2", "fact": "Lives in Paris", "timestamp": "2026-11-20T08:00:00Z"}),
        ("p/b", {"id": "b-1", "fact": "Likes tea", "date": "2026-11-20"}),
        ("p/b", {"id": "b-2", "fact": "Said no", "timestamp": "2026-11-01", "status": "rejected"}),
        ("p/b", {"id": "b-3", "fact": "Maybe moves", "timestamp": "2026-11-03", "status": "proposed"}),
        (
            "p/b",
            {"id": "b-4", "fact": "Old", "timestamp": "soon", "status": "superseded", "superseded_by": "a later note"},
        ),
    ]
    text = timeline(facts, flink, elink)
    assert text.startswith(MARK + "\n# Timeline\n") and "not synced back" in text
    body = text.split("\n## ", 1)[1]
    assert body == (
        "2026-11\n\n"
        "- 2026-11-20 [[p/a]] [[p/a/facts/a-2|a-2]]: Lives in Paris\n"
        "- 2026-11-20 [[p/b]] [[p/b/facts/b-1|b-1]]: Likes tea\n"
        "- 2026-11-03 [[p/b]] [[p/b/facts/b-3|b-3]]: Maybe moves (proposed)\n"
        "\n## 2026-03\n\n"
        "- 2026-03-02 [[p/a]] [[p/a/facts/a-1|a-1]]: Lives in Lyon (superseded by [[p/a/facts/a-2|a-2]])\n"
        "\n## Undated\n\n"
        "- ---------- [[p/b]] [[p/b/facts/b-4|b-4]]: Old (superseded by a later note)\n"
    )
    shuffled = facts[:]
    random.Random(7).shuffle(shuffled)
    assert timeline(shuffled, flink, elink) == text  # no clock, no input order: the same facts, the same bytes


def test_review_writes_it_once_and_a_pass_leaves_it_alone(env: Env) -> None:
    review(env.cfg, TODAY)
    path = env.vault / "Timeline.md"
    text = path.read_text()
    assert text.startswith(MARK)
    assert f"[[{SARAH_DIR}/facts/sarah-chen-002|sarah-chen-002]]" in text
    assert f"(superseded by [[{SARAH_DIR}/facts/sarah-chen-005|sarah-chen-005]])" in text
    assert text.index("## 2026-11") < text.index("## 2026-10")
    assert "Timeline.md" in git(env.vault, "show", "--name-only", "--format=%s", "HEAD")
    head, raw = git(env.vault, "rev-parse", "HEAD"), path.read_bytes()

    again = review(env.cfg, TODAY)  # nothing changed: nothing written, nothing committed
    assert path.read_bytes() == raw and git(env.vault, "rev-parse", "HEAD") == head and again.commits == []
    env.sync()
    assert path.read_bytes() == raw and git(env.vault, "rev-parse", "HEAD") == head

    items = env.items_path(SARAH).read_bytes()
    path.write_text(text.replace("sarah-chen-002]]:", "sarah-chen-002]]: EDITED"))
    env.sync()  # the person's edit is not memory
    assert env.items_path(SARAH).read_bytes() == items
    review(env.cfg, TODAY)
    assert path.read_bytes() == raw  # the next review puts the generated text back
