"""The line-wise three-way merge of texts (daily notes, MEMORY.md, summaries), pure and end to end.

The everyday case is the agent and the person both appending to today's daily note: that must merge, both
kept, the agent's lines first. Only changes to the same base lines are a conflict.
"""

from __future__ import annotations

from datetime import date

from helpers.twoway import Env
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.core.merge import CLASH, merge_text

DAY = "# 2026-12-01\n\n- 08:00 agent: morning check\n"


def test_both_sides_appending_keeps_both_agent_first() -> None:
    memory = DAY + "- 10:00 agent: sent the invoice\n"
    vault = DAY + "- Nora: call the bank\n"
    assert merge_text(DAY, memory, vault) == (DAY + "- 10:00 agent: sent the invoice\n- Nora: call the bank\n", "")


def test_a_line_both_sides_appended_is_kept_once() -> None:
    """A pass that wrote the agent's line to the note but was stopped before it recorded the base leaves that
    line on both sides; the next pass must not double it."""
    memory = DAY + "- 10:00 agent: sent the invoice\n- 11:00 agent: paid\n"
    vault = DAY + "- 10:00 agent: sent the invoice\n- Nora: call the bank\n"
    merged, detail = merge_text(DAY, memory, vault)
    assert (merged, detail) == (memory + "- Nora: call the bank\n", "")


def test_appending_after_a_note_saved_without_a_final_line_break() -> None:
    base = DAY + "- Nora: call the bank"
    memory = base + "\n- 10:00 agent: sent the invoice\n"
    vault = base + "\n- Nora: and the dentist"
    merged, detail = merge_text(base, memory, vault)
    assert detail == ""
    assert merged == base + "\n- 10:00 agent: sent the invoice\n- Nora: and the dentist\n"


def test_insertions_at_different_places_and_an_edit_next_to_one() -> None:
    base = "# day\n\n## Morning\n- a\n\n## Evening\n- b\n"
    memory = base.replace("- a\n", "- a\n- agent: a2\n")
    vault = base.replace("- b\n", "- b (done)\n- Nora: b2\n").replace("## Morning\n", "## Morning\n- Nora: first\n")
    merged, detail = merge_text(base, memory, vault)
    assert detail == ""
    assert merged == "# day\n\n## Morning\n- Nora: first\n- a\n- agent: a2\n\n## Evening\n- b (done)\n- Nora: b2\n"


def test_crlf_lines_keep_their_endings() -> None:
    base = "# day\r\n- a\r\n"
    merged, detail = merge_text(base, base + "- agent\r\n", base + "- Nora\n")
    assert (merged, detail) == ("# day\r\n- a\r\n- agent\r\n- Nora\n", "")


def test_a_real_overlap_is_a_conflict_and_memory_wins() -> None:
    base = DAY + "- 12:00 lunch with Sarah\n"
    memory = base.replace("12:00", "12:30")
    vault = base.replace("lunch", "call")
    assert merge_text(base, memory, vault) == (memory, CLASH)


def test_an_insertion_inside_a_block_the_other_side_replaced_is_a_conflict() -> None:
    base = "a\nb\nc\nd\n"
    memory = "a\nB\nC\nd\n"
    vault = "a\nb\nnew\nc\nd\n"
    assert merge_text(base, memory, vault) == (memory, CLASH)


texts = st.text(alphabet="ab\r\n", max_size=12)


@settings(max_examples=300, deadline=None)
@given(base=texts, changed=texts)
def test_an_unchanged_side_gives_the_other_exactly(base: str, changed: str) -> None:
    assert merge_text(base, base, changed) == (changed, "")
    assert merge_text(base, changed, base) == (changed, "")
    assert merge_text(base, changed, changed) == (changed, "")


@st.composite
def disjoint_edits(draw: st.DrawFn) -> tuple[list[str], list[str], list[str], set[str], set[str]]:
    """A base of unique lines and two sides' edits that touch no common base line.

    Each base line is kept, or deleted or replaced by one side; each gap between lines may get new lines from
    either side or both. A side inserting inside a run of lines the other side changed would touch those same
    lines, so such insertions are not drawn.
    """
    n = draw(st.integers(0, 6))
    base = [f"base {k}\n" for k in range(n)]
    owners = [draw(st.sampled_from(["", "m", "v"])) for _ in range(n)]
    counter = iter(range(1000))
    sides: dict[str, list[str]] = {"m": [], "v": []}
    removed: set[str] = set()
    for gap in range(n + 1):
        inside = owners[gap] if 0 < gap < n and owners[gap - 1] == owners[gap] else ""
        for side in ("m", "v"):
            if inside and inside != side:
                continue
            sides[side] += [f"{side} new {next(counter)}\n" for _ in range(draw(st.integers(0, 2)))]
        if gap == n:
            break
        line = base[gap]
        for side in ("m", "v"):
            if owners[gap] != side:
                sides[side].append(line)
            else:
                removed.add(line)
                sides[side] += [f"{side} new {next(counter)}\n" for _ in range(draw(st.integers(0, 2)))]
    kept = [line for line in base if line not in removed]
    return base, sides["m"], sides["v"], set(removed), set(kept)


@settings(max_examples=300, deadline=None)
@given(case=disjoint_edits())
def test_changes_to_different_lines_keep_every_added_line(
    case: tuple[list[str], list[str], list[str], set[str], set[str]],
) -> None:
    base, memory, vault, removed, kept = case
    merged, detail = merge_text("".join(base), "".join(memory), "".join(vault))
    assert detail == ""
    out = merged.splitlines(keepends=True)
    added = [line for line in memory + vault if line not in base]
    assert sorted(line for line in out if line not in base) == sorted(added), "an added line was lost or doubled"
    assert not removed & set(out), "a line one side removed came back"
    assert [line for line in out if line in base] == [line for line in base if line in kept]
    for side in (memory, vault):
        mine = [line for line in out if line in side]
        assert mine == [line for line in side if line in out], "a side's lines changed order"


def test_both_appending_to_the_daily_note_merges_in_a_real_pass(env: Env) -> None:
    mem = env.mem_file("memory/2026-12-01.md")
    note = env.note("Daily/2026-12-01.md")
    before = mem.read_text(encoding="utf-8")
    assert note.read_text(encoding="utf-8") == before
    with mem.open("a", encoding="utf-8") as f:
        f.write("- 17:00 agent: booked the venue for the readout\n")
    with note.open("a", encoding="utf-8") as f:
        f.write("- Nora: ask Sarah about the poster sizes")

    report = env.sync(today=date(2026, 12, 1))

    assert report.conflicts == [] and report.exit_code == 0, report.to_json()
    expected = before + "- 17:00 agent: booked the venue for the readout\n- Nora: ask Sarah about the poster sizes"
    assert mem.read_text(encoding="utf-8") == expected
    assert note.read_text(encoding="utf-8") == expected
    assert not list(note.parent.glob("*vaultsync-conflict*"))
    assert env.git("status", "--porcelain") == ""
