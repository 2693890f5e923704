"""The weekly review: the checks as a specification (values in, findings out), and the review note's round trip on
real files and git (write the note, tick a box as a person would, ``review --fix``, see items.json).
"""

from __future__ import annotations

import json
import stat
from datetime import date
from pathlib import Path

from helpers.e2e import git
from helpers.twoway import SARAH, SARAH_DIR, Env
from hypothesis import given
from hypothesis import strategies as st

from vaultsync.app.review import fix, regenerate, review
from vaultsync.core.review import EntityFacts, Finding, Fix, review_entity
from vaultsync.core.review_note import BEGIN, END, generated_section, keep_typed, mark_applied, review_note, ticked
from vaultsync.model import ExitCode, Severity

TODAY = date(2026, 12, 1)
SINGLE = ("role", "employer", "location", "relationship-status")


def fact(fid: str, text: str = "", status: str = "active", **extra: object) -> dict[str, object]:
    return {"id": fid, "fact": text or f"text of {fid}", "status": status, "timestamp": "2026-10-01", **extra}


def kinds(facts: list[dict[str, object]], summary: str | None = "# S\n", day: date | None = TODAY) -> list[tuple]:
    found = review_entity(EntityFacts("areas/people/s", facts, summary, day, {"elsewhere-1"}), TODAY, SINGLE)
    return [(f.kind, f.ids) for f in found]


def test_supersede_chains() -> None:
    assert kinds([fact("a", status="superseded", supersededBy="zz")]) == [("dangling-superseded-by", ("a", "zz"))]
    assert kinds([fact("a", status="superseded", supersededBy="elsewhere-1")]) == []  # a fact of another entity
    assert kinds([fact("a", status="superseded", supersededBy="a newer note")]) == []  # free text stays text
    assert kinds([fact("a", status="superseded")]) == [("superseded-without-successor", ("a",))]
    loop = [fact("a", status="superseded", supersededBy="b"), fact("b", status="superseded", supersededBy="a")]
    assert kinds(loop) == [("superseded-by-cycle", ("a", "b"))]
    chain = [fact("a", status="superseded", supersededBy="b"), fact("b", status="superseded", supersededBy="c")]
    assert kinds([*chain, fact("c")]) == []
    assert kinds([*chain, fact("c", status="rejected")]) == [
        ("successor-not-active", ("a", "b", "c")),
        ("successor-not-active", ("b", "c")),
    ]
    assert kinds([fact("a", status="superseded", superseded_by="b"), fact("b")]) == []  # either key


def test_duplicates_conflicts_and_timestamps() -> None:
    dup = [
        fact("a", "Likes  Tea"),
        fact("b", "likes tea"),
        fact("c", "likes tea", status="superseded", supersededBy="a"),
    ]
    found = review_entity(EntityFacts("e/x", dup, "# X\n", TODAY), TODAY, SINGLE)
    assert [(f.kind, f.ids) for f in found] == [("duplicate-active", ("a", "b"))]
    assert [(x.action, x.ids, x.by) for x in found[0].fixes] == [("supersede", ("b",), "a")]
    roles = [fact("a", category="role", timestamp="2026-01-01"), fact("b", category="role", timestamp="2026-06-01")]
    found = review_entity(EntityFacts("e/x", roles, "# X\n", TODAY), TODAY, SINGLE)
    assert [(f.kind, [(x.ids, x.by) for x in f.fixes]) for f in found] == [("conflicting-active", [(("a",), "b")])]
    assert kinds([fact("a", category="hobby"), fact("b", category="hobby")]) == []
    assert kinds([fact("a", timestamp="last week"), fact("b", timestamp="2027-01-01")]) == [
        ("bad-timestamp", ("a",)),
        ("bad-timestamp", ("b",)),
    ]


def test_summaries() -> None:
    assert kinds([fact("a")], summary=None) == [("missing-summary", ())]
    assert kinds([], summary=None) == []
    assert kinds([fact("a", timestamp="2026-11-30")], day=date(2026, 11, 1)) == [("stale-summary", ())]
    old = fact("a", "Works at Acme Corp as an engineer", status="superseded", supersededBy="b")
    quoting = "# S\nShe works at  acme corp as an engineer.\n"
    assert kinds([old, fact("b")], summary=quoting) == [("stale-summary", ("a",))]


def test_generated_section_keeps_the_prose_and_replaces_itself() -> None:
    facts = [
        fact("a", "Old role", category="role", timestamp="2026-01-01"),
        fact("b", "New role", category="role", timestamp="2026-06-01"),
        fact("c", "Gone", status="superseded", supersededBy="b", category="role"),
    ]
    once = generated_section("# Sarah\n\nHand-written prose.\n", facts)
    assert once.startswith("# Sarah\n\nHand-written prose.\n\n" + BEGIN)
    assert once.index("New role") < once.index("Old role") and "Gone" not in once and once.endswith(END + "\n")
    assert generated_section(once, facts) == once
    assert generated_section(once + "\nAfter.\n", facts[:1]).endswith(END + "\n\nAfter.\n")


def test_review_note_round_trip(env: Env) -> None:
    _write_facts(env)
    result = review(env.cfg, TODAY)
    assert result.exit_code is ExitCode.CONFLICTS
    assert ("duplicate-active", SARAH, ("sarah-chen-001", "sarah-chen-090")) in [
        (f.kind, f.entity, f.ids) for f in result.findings
    ]
    note = env.vault / "Reviews/2026-W49.md"
    text = note.read_text()
    task = next(line for line in text.splitlines() if "- [ ] supersede" in line and "sarah-chen-090" in line)
    assert f"[[{SARAH_DIR}/facts/sarah-chen-090|sarah-chen-090]]" in task
    assert git(env.vault, "log", "-1", "--format=%s").startswith("review: Reviews/2026-W49.md")
    before = env.items_path(SARAH).read_bytes()
    assert fix(env.cfg, TODAY).applied == []  # nothing ticked: nothing applied
    assert env.items_path(SARAH).read_bytes() == before
    note.write_text(text.replace(task, task.replace("- [ ]", "- [x]")))  # the person ticks one box
    done = fix(env.cfg, TODAY)
    assert done.applied == [f"{SARAH}: sarah-chen-090 superseded by sarah-chen-001"]
    assert env.fact(SARAH, "sarah-chen-090")["status"] == "superseded"
    assert env.fact(SARAH, "sarah-chen-090")["supersededBy"] == "sarah-chen-001"
    assert env.fact(SARAH, "sarah-chen-001")["status"] == "active"
    assert env.items_path(SARAH).read_bytes().startswith(before[:200])  # edited in place, in the file's style
    assert "(applied 2026-12-01)" in note.read_text() and ticked(note.read_text()) == []
    vault_note = env.vault / SARAH_DIR / "facts/sarah-chen-090.md"
    assert "status: superseded" in vault_note.read_text()
    # The review note itself is the agent's; the ticks, the fix and the marks are the person's decision.
    authors = git(env.vault, "log", "--format=%an", f"-{len(done.commits)}").split("\n")[: len(done.commits)]
    assert done.commits and "vaultsync agent" not in authors, authors
    assert git(env.vault, "log", "-1", "--format=%an", "--", "Reviews/2026-W49.md").strip() == authors[0]
    assert fix(env.cfg, TODAY).applied == []  # applied once, not twice


def test_a_note_edited_into_nonsense_changes_nothing(env: Env) -> None:
    _write_facts(env)
    review(env.cfg, TODAY)
    note = env.vault / "Reviews/2026-W49.md"
    lines = note.read_text().splitlines()
    n = next(i for i, line in enumerate(lines) if "- [ ] supersede" in line)
    lines[n] = lines[n].replace("- [ ]", "- [x]").replace('vaultsync-fix: ["supersede"', 'vaultsync-fix: ["explode"')
    note.write_text("\n".join(lines) + "\n")
    before = env.items_path(SARAH).read_bytes()
    result = fix(env.cfg, TODAY)
    assert [p.message.split(":")[0] for p in result.problems if p.severity is Severity.ERROR] == [f"line {n + 1}"]
    assert result.exit_code is ExitCode.SKIPPED_INPUT
    assert env.items_path(SARAH).read_bytes() == before


def test_regenerate_and_an_external_summariser(env: Env, tmp_path: Path) -> None:
    summary = env.life / SARAH / "summary.md"
    prose = summary.read_text()
    dry = regenerate(env.cfg, [SARAH], TODAY, dry_run=True)
    assert dry.diffs and BEGIN in dry.diffs[0] and summary.read_text() == prose
    regenerate(env.cfg, [SARAH], TODAY)
    assert summary.read_text().startswith(prose) and BEGIN in summary.read_text()
    assert BEGIN in (env.vault / SARAH_DIR / "sarah-chen.md").read_text()
    script = tmp_path / "summarise.py"
    script.write_text(
        "import json, sys\nd = json.load(sys.stdin)\nprint('# ' + d['entity'] + ' from', len(d['facts']))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    env.cfg = env.cfg.__class__(**{**env.cfg.__dict__, "review": env.cfg.review.__class__(command=f"python3 {script}")})
    regenerate(env.cfg, [SARAH], TODAY)
    assert summary.read_text().startswith(f"# {SARAH} from ")
    failing = env.cfg.review.__class__(command="python3 -c 'import sys; sys.exit(3)'")
    env.cfg = env.cfg.__class__(**{**env.cfg.__dict__, "review": failing})
    before = summary.read_bytes()
    result = regenerate(env.cfg, [SARAH], TODAY)
    assert summary.read_bytes() == before and "exit 3" in result.problems[0].message


def _write_facts(env: Env, rel: str = SARAH) -> None:
    """Sarah gains a duplicate of her first fact, as an agent that forgot it knew it would write it."""
    doc = json.loads(env.items_path(rel).read_bytes())
    first = doc[0]
    doc.append({**first, "id": "sarah-chen-090", "fact": first["fact"].upper(), "timestamp": "2026-11-01"})
    env.items_path(rel).write_text(json.dumps(doc, indent=2) + "\n")
    env.sync()


def _sarah_renamed_with_a_space(env: Env) -> str:
    """Sarah Chen's folder named as a person would, with a space; returns the new rel."""
    (env.vault / SARAH_DIR).rename(env.vault / "2 Areas/people/Sarah Chen")
    env.sync()
    return "areas/people/Sarah Chen"


def test_a_fix_for_a_folder_with_a_space_is_applied(env: Env) -> None:
    rel = _sarah_renamed_with_a_space(env)
    _write_facts(env, rel)
    review(env.cfg, TODAY)
    note = env.vault / "Reviews/2026-W49.md"
    text = note.read_text()
    task = next(line for line in text.splitlines() if "- [ ] supersede" in line and "sarah-chen-090" in line)
    note.write_text(text.replace(task, task.replace("- [ ]", "- [x]")))

    done = fix(env.cfg, TODAY)

    assert done.exit_code is not ExitCode.SKIPPED_INPUT, done.to_json()
    assert done.applied == [f"{rel}: sarah-chen-090 superseded by sarah-chen-001"]
    assert env.fact(rel, "sarah-chen-090")["status"] == "superseded"
    assert fix(env.cfg, TODAY).applied == []


def test_a_fix_spec_written_before_with_spaces_still_reads() -> None:
    line = "  - [x] supersede a by b <!-- vaultsync-fix: supersede areas/people/Maria Lopez s-7 s-9 -->"
    [task] = ticked(f"# Memory review 2026-W49\n{line}\n")
    assert (task.entity, task.fix.ids, task.fix.by) == ("areas/people/Maria Lopez", ("s-7",), "s-9")


def test_a_line_separator_above_the_fixes_marks_the_ticked_line(env: Env) -> None:
    """U+2028 pasted into the note is text within a line for Obsidian: the fix is applied once, its line marked."""
    _write_facts(env)
    review(env.cfg, TODAY)
    note = env.vault / "Reviews/2026-W49.md"
    text = note.read_text()
    task = next(line for line in text.splitlines() if "- [ ] supersede" in line and "sarah-chen-090" in line)
    text = text.replace("Tick the fixes", "Pasted\u2028from a chat. Tick the fixes")
    note.write_text(text.replace(task, task.replace("- [ ]", "- [x]")), encoding="utf-8")

    first = fix(env.cfg, TODAY)

    assert first.applied == [f"{SARAH}: sarah-chen-090 superseded by sarah-chen-001"]
    marked = next(line for line in note.read_text().split("\n") if "sarah-chen-090" in line and "- [x]" in line)
    assert "(applied 2026-12-01)" in marked
    assert "Pasted\u2028from a chat." in note.read_text()
    commits = git(env.vault, "rev-list", "--count", "HEAD")
    assert fix(env.cfg, TODAY).applied == [] and git(env.vault, "rev-list", "--count", "HEAD") == commits


def test_a_second_review_in_the_week_keeps_what_the_person_typed(env: Env) -> None:
    _write_facts(env)
    review(env.cfg, TODAY)
    note = env.vault / "Reviews/2026-W49.md"
    lines = note.read_text().split("\n")
    at = next(n for n, line in enumerate(lines) if "- [ ] supersede" in line)
    lines.insert(at + 1, "  - asked Sarah which one is right; she says 001")
    lines.insert(2, "Reviewed on the train.")
    note.write_text("\n".join(lines))
    env.agent_edit(SARAH, lambda facts: facts.append({**facts[1], "id": "sarah-chen-091", "fact": "x"}))
    env.sync()

    again = review(env.cfg, TODAY)

    text = note.read_text()
    assert text.count("asked Sarah which one is right; she says 001") == 1 and text.count("Reviewed on the train.") == 1
    assert text.index("she says 001") > text.index("sarah-chen-090")
    assert again.exit_code is ExitCode.CONFLICTS
    assert review(env.cfg, TODAY).commits == []  # the same review again writes nothing new


typed = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=20).filter(
    lambda t: t.strip() and not t.lstrip().startswith(("#", "-"))
)


def _note(rels: list[str]) -> str:
    findings = [
        Finding("duplicate-active", rel, "a and b say the same", ("a", "b"), (Fix("supersede", ("b",), "a"),))
        for rel in rels
    ]
    return review_note("2026-W49", findings, lambda rel, fid: f"[[{rel}/{fid}|{fid}]]", lambda rel: f"[[{rel}]]")


@given(st.lists(st.tuples(st.integers(0, 20), typed), max_size=5), st.booleans())
def test_typed_lines_are_kept_and_fixes_mark_their_line(inserts: list[tuple[int, str]], gone: bool) -> None:
    rels = ["areas/people/Maria Lopez", "areas/people/bo"]
    old = _note(rels).split("\n")
    for at, line in inserts:
        old.insert(min(at, len(old)), line)
    text = "\n".join(old)
    new = _note(rels[:1] if gone else rels)
    merged = keep_typed(text, new)
    for _, line in inserts:
        assert merged.split("\n").count(line) == text.split("\n").count(line)
    assert keep_typed(merged, new) == merged  # the same review again: nothing moves, nothing doubles
    tasks = [n for n, line in enumerate(text.split("\n")) if "- [ ]" in line and "vaultsync-fix" in line]
    ticked_text = "\n".join(line.replace("- [ ]", "- [x]", 1) if n in tasks else line for n, line in enumerate(old))
    found = ticked(ticked_text)
    assert [t.entity for t in found] == rels and ticked(mark_applied(ticked_text, [t.line for t in found], TODAY)) == []


def test_a_note_whose_fix_cannot_apply_does_not_block_the_others(env: Env) -> None:
    _write_facts(env)
    review(env.cfg, TODAY)
    old_week = env.vault / "Reviews/2026-W48.md"
    old_week.write_text('  - [x] gone <!-- vaultsync-fix: ["supersede", "areas/people/nobody", "a", "b"] -->\n')
    note = env.vault / "Reviews/2026-W49.md"
    text = note.read_text()
    task = next(line for line in text.splitlines() if "- [ ] supersede" in line and "sarah-chen-090" in line)
    note.write_text(text.replace(task, task.replace("- [ ]", "- [x]")))

    done = fix(env.cfg, TODAY)

    assert done.applied == [f"{SARAH}: sarah-chen-090 superseded by sarah-chen-001"]
    assert [p.path for p in done.problems if p.severity is Severity.ERROR] == [str(old_week)]
    assert "(applied 2026-12-01)" in note.read_text() and "(applied" not in old_week.read_text()
