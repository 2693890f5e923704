"""Re-ranking by who, when and the line before: each boost on a small chat log where plain bm25 gets it wrong."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date

from helpers.twoway import NOW, TODAY, Env
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.app.recall import RecallOptions, recall
from vaultsync.app.sync import sync
from vaultsync.core.periods import period
from vaultsync.options import PassOptions
from vaultsync.state.files import StateFiles

LOG = {
    "2026-03-10": [
        "# 2026-03-10",
        "",
        "## Evening call",
        "",
        "- **Sam**: I signed up for the pottery class at the community centre, it starts in April.",
        "- **Nora**: What day does it meet?",
        "- **Sam**: Thursdays at seven, the teacher is Ines.",
    ],
    "2026-04-20": [
        "# 2026-04-20",
        "",
        "## Lunch",
        "",
        "- **Priya**: Pottery class? The pottery class is all anyone talks about.",
        "- **Nora**: Ha, true.",
    ],
}


def write_log(env: Env) -> None:
    """The log, and a long list of Sam's: as in anyone's memory of a friend, their name is in most lines, so
    bm25 gives it next to no weight."""
    for day, lines in LOG.items():
        (env.workspace / "memory" / f"{day}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    chores = "".join(f"- **Sam**: packing list item {n}\n\n" for n in range(400))
    (env.workspace / "memory" / "2026-01-05.md").write_text(f"# 2026-01-05\n\n{chores}", encoding="utf-8")


def where(env: Env, query: str, **options: object) -> list[str]:
    hits = recall(env.cfg, query, RecallOptions(kinds=("daily",), limit=5, **options)).hits  # type: ignore[arg-type]
    return [f"{h.path}:{h.lines[0]}" for h in hits if h.lines]


def test_a_named_speaker_puts_their_own_line_first(env: Env) -> None:
    write_log(env)
    assert where(env, "Sam pottery class")[0] == "memory/2026-03-10.md:5"
    assert where(env, "Priya pottery class")[0] == "memory/2026-04-20.md:5"
    # Naming someone in a line of one's own is about the speaker: less of a boost than the named one's line.
    said = "# 2026-04-21\n\n- **Priya**: Sam, your pottery class sounds fun.\n"
    (env.workspace / "memory" / "2026-04-21.md").write_text(said, encoding="utf-8")
    assert where(env, "Sam pottery class")[0] == "memory/2026-03-10.md:5"


def test_a_named_period_puts_the_line_dated_inside_it_first(env: Env) -> None:
    write_log(env)
    assert where(env, "pottery class in March 2026")[0] == "memory/2026-03-10.md:5"
    assert where(env, "pottery class last month", today="2026-04-02")[0] == "memory/2026-03-10.md:5"
    assert where(env, "pottery class last week", today="2026-04-27")[0] == "memory/2026-04-20.md:5"


def test_the_answer_on_the_line_after_the_question_is_returned(env: Env) -> None:
    write_log(env)
    found = where(env, "what day does the pottery class meet")
    assert "memory/2026-03-10.md:7" in found, found  # the five best; before, it matched no word and was never returned


def test_explain_names_the_parts_of_the_score(env: Env) -> None:
    write_log(env)
    hits = recall(env.cfg, "Sam pottery class", RecallOptions(kinds=("daily",), explain=True)).hits
    first = hits[0].to_json()["explain"]
    assert first["entity"] > 0 and first["bm25"] > 0
    assert "explain" not in recall(env.cfg, "Sam pottery class").hits[0].to_json()
    cmd = [sys.executable, "-m", "vaultsync.cli", "recall", "Sam pottery class", "--explain", "--json"]
    out = subprocess.run([*cmd, "--config", str(env.config_path)], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["hits"][0]["explain"]["entity"] > 0
    table = subprocess.run([*cmd[:-1], "--config", str(env.config_path)], capture_output=True, text=True, check=True)
    assert "entity +" in table.stdout and "bm25" in table.stdout


def test_periods_named_in_a_question() -> None:
    today = date(2026, 4, 15)  # a Wednesday
    cases = {
        "what happened in March 2026": ("2026-03-01", "2026-03-31"),
        "on 2026-02-03 at lunch": ("2026-02-03", "2026-02-03"),
        "last week": ("2026-04-06", "2026-04-12"),
        "yesterday's call": ("2026-04-14", "2026-04-14"),
        "anything in May": ("2025-05-01", "2025-05-31"),
        "during 2025": ("2025-01-01", "2025-12-31"),
        "5 March 2026": ("2026-03-05", "2026-03-05"),
    }
    for text, span in cases.items():
        found = period(text, today)
        assert found is not None and (found.first, found.last) == span, text
    assert period("may I ask what the plan is", today) is None
    assert period("march on with the plan", today) is None


def test_a_pass_builds_a_missing_index_so_no_query_waits(env: Env) -> None:
    path = StateFiles(env.cfg.state_dir).recall
    path.unlink(missing_ok=True)
    assert sync(env.cfg, PassOptions(today=TODAY, now=lambda: NOW)).exit_code == 0
    assert path.exists(), "built by the pass, before any query"
    write_log(env)
    assert where(env, "Sam pottery class")[0] == "memory/2026-03-10.md:5"


PHRASES = ["last week", "yesterday", "in March", "3 days ago", "March 31", "2026-02-30", "past two weeks", "in 9999"]
TEXT = st.text(alphabet=st.sampled_from(list("0123456789-/ ,.?aAyMmJjrchlstwekdo")), max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXT, st.sampled_from(PHRASES)), st.dates())
def test_any_text_names_at_most_one_well_formed_period(text: str, today: date) -> None:
    found = period(text, today)
    if found is not None:
        assert date.fromisoformat(found.first) <= date.fromisoformat(found.last)
        assert 0 <= found.start < found.end <= len(text)


def test_a_question_naming_the_person_favours_their_own_lines(env: Env) -> None:
    note = env.workspace / "memory" / "2026-03-12.md"
    lines = ["- **Priya**: The new glaze: glaze tests again today.", "- **Me**: I mixed a celadon glaze for the vase."]
    note.write_text("# 2026-03-12\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    assert where(env, "Quinn glaze")[0] == "memory/2026-03-12.md:3", "without the config's name, bm25's order"
    env.reconfigure(person_name="Quinn Adler")
    assert where(env, "Quinn glaze")[0] == "memory/2026-03-12.md:4"


def test_a_question_after_what_was_true_before_ranks_superseded_facts_by_score(env: Env) -> None:
    now = [hit.id for hit in recall(env.cfg, "which unit at Alder Street", RecallOptions(kinds=("fact",))).hits]
    assert now.index("old-apartment-001") > now.index("old-apartment-003"), "current facts first"
    asked = "which unit at Alder Street before"
    before = [hit.id for hit in recall(env.cfg, asked, RecallOptions(kinds=("fact",))).hits]
    assert before[0] == "old-apartment-001"
