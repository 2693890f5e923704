"""The janitor: tagged MEMORY.md sections expire into the monthly archive, old daily notes move to the archive,
oversized bootstrap files are warned about, and the vault and git follow in the same command.

End-to-end tests run on a synced copy of vault-example with real git; the property tests check the pure parts
(the tag grammar, the split) on generated MEMORY.md files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

from helpers.crash import CRASH_BOOT, RENAMES, git_env
from helpers.e2e import git
from helpers.twoway import Env
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.app.janitor import janitor
from vaultsync.config import Janitor
from vaultsync.memory.archive import append_sections, merge_daily, without_sections
from vaultsync.memory.sections import SectionsError, expired, parse_sections, split_lines
from vaultsync.model import ExitCode, Severity

TODAY = date(2026, 12, 1)
MEMORY = """# MEMORY.md

## 用户偏好 [P0]
<!-- L0: 用户的长期偏好 -->
- 喜欢简洁

## Espresso [P2] [2026-10-01]
<!-- L0: coffee order -->
- double shot, no sugar

```
## Not a section [P2] [2020-01-01]
```

## X Timeline Scraping [P1] 2026-08-01
- scraper ran nightly

### Details
- cron at 02:00

## Fresh [P2][2026-11-20]
- recent

## Undated [P1]
- no date

<!--
## Commented [P2] [2020-01-01]
-->
- [P2] [2020-01-01] a tagged bullet is not a section
"""


def write_memory(env: Env, text: str, crlf: bool = False) -> bytes:
    raw = text.replace("\n", "\r\n").encode() if crlf else text.encode()
    (env.workspace / "MEMORY.md").write_bytes(raw)
    return raw


def test_expired_sections_move_to_the_archive_and_the_vault_and_git_follow(env: Env) -> None:
    write_memory(env, MEMORY)
    env.sync()
    result = janitor(env.cfg, today=TODAY)
    assert [(s.priority, s.title) for s in result.sections] == [(2, "Espresso"), (1, "X Timeline Scraping")]
    assert result.exit_code is ExitCode.CLEAN
    left = (env.workspace / "MEMORY.md").read_text()
    assert "Espresso" not in left and "X Timeline" not in left and "cron at 02:00" not in left
    assert "## 用户偏好 [P0]" in left and "## Fresh [P2][2026-11-20]" in left and "## Undated [P1]" in left
    assert "## Commented [P2] [2020-01-01]" in left and "a tagged bullet is not a section" in left
    archive = (env.workspace / "memory/archive/MEMORY-2026-12.md").read_text()
    assert "<!-- L0: coffee order -->\n- double shot, no sugar\n" in archive
    assert "```\n## Not a section [P2] [2020-01-01]\n```\n" in archive  # the fence went with its section
    assert "### Details\n- cron at 02:00\n" in archive
    assert any("Undated" in p.message and "without a date" in p.message for p in result.problems)
    # The vault shows both files, and one agent commit says what the janitor did.
    assert (env.vault / "3 Resources/agent/MEMORY.md").read_text() == left
    assert (env.vault / "4 Archives/agent/MEMORY-2026-12.md").read_text() == archive
    subject = git(env.vault, "log", "-1", "--format=%s").strip()
    assert subject == "janitor: archived 2 sections from MEMORY.md (P2 Espresso, P1 X Timeline Scraping)"
    assert git(env.vault, "log", "-1", "--format=%an").strip() == env.cfg.git.agent_name


def test_a_second_run_changes_nothing_and_a_later_one_appends(env: Env) -> None:
    write_memory(env, MEMORY)
    janitor(env.cfg, today=TODAY)
    archive = env.workspace / "memory/archive/MEMORY-2026-12.md"
    first, memory, commits = archive.read_bytes(), (env.workspace / "MEMORY.md").read_bytes(), _commits(env)
    again = janitor(env.cfg, today=TODAY)
    assert not again.sections and again.sync is None
    assert archive.read_bytes() == first and (env.workspace / "MEMORY.md").read_bytes() == memory
    assert _commits(env) == commits
    later = janitor(env.cfg, today=date(2026, 12, 25))  # "Fresh" is now 35 days old
    assert [s.title for s in later.sections] == ["Fresh"]
    assert archive.read_bytes().startswith(first)  # appended, never rewritten
    assert archive.read_bytes()[len(first) :].decode().count("## Fresh") == 1


def test_crlf_lines_are_archived_verbatim(env: Env) -> None:
    raw = write_memory(env, MEMORY, crlf=True)
    janitor(env.cfg, today=TODAY)
    archive = (env.workspace / "memory/archive/MEMORY-2026-12.md").read_bytes()
    left = (env.workspace / "MEMORY.md").read_bytes()
    assert b"## Espresso [P2] [2026-10-01]\r\n<!-- L0: coffee order -->\r\n" in archive
    assert b"\n" not in left.replace(b"\r\n", b"")
    filled = [line for line in split_lines(raw) if line.strip()]
    assert sorted(filled) == sorted(line for line in split_lines(left) + _archived_lines(archive) if line.strip())


def test_dry_run_names_the_sections_and_writes_nothing(env: Env) -> None:
    write_memory(env, MEMORY)
    env.sync()
    before = (env.workspace / "MEMORY.md").read_bytes()
    commits = _commits(env)
    result = janitor(env.cfg, dry_run=True, today=TODAY)
    assert [s.title for s in result.sections] == ["Espresso", "X Timeline Scraping"]
    assert (env.workspace / "MEMORY.md").read_bytes() == before
    assert not (env.workspace / "memory/archive/MEMORY-2026-12.md").exists()
    assert _commits(env) == commits


def test_malformed_memory_is_reported_with_its_line_and_left_alone(env: Env) -> None:
    fence = (MEMORY + "\n```python\n## [P2] [2020-01-01]\n", MEMORY.count("\n") + 2)
    for bad, line in (fence, (b"# M\n\n## A [P2] [2020-01-01]\n\xff\n", 4)):
        raw = bad.encode() if isinstance(bad, str) else bad
        (env.workspace / "MEMORY.md").write_bytes(raw)
        result = janitor(env.cfg, today=TODAY)
        assert result.exit_code is ExitCode.SKIPPED_INPUT
        assert [p.message.split(":")[0] for p in result.problems if p.severity is Severity.ERROR] == [f"line {line}"]
        assert (env.workspace / "MEMORY.md").read_bytes() == raw
        assert not (env.workspace / "memory/archive/MEMORY-2026-12.md").exists()


def test_daily_notes_past_retention_move_with_their_names(env: Env) -> None:
    env.cfg = replace(env.cfg, janitor=replace(env.cfg.janitor, keep_daily_days=2))
    old = (env.workspace / "memory/2026-11-27.md").read_bytes()
    result = janitor(env.cfg, today=TODAY)
    assert result.daily == [
        ("memory/2026-11-27.md", "memory/archive/daily/2026-11-27.md"),
        ("memory/2026-11-28.md", "memory/archive/daily/2026-11-28.md"),
    ]
    assert (env.workspace / "memory/archive/daily/2026-11-27.md").read_bytes() == old
    assert not (env.workspace / "memory/2026-11-27.md").exists()
    assert (env.workspace / "memory/2026-11-29.md").exists()
    assert (env.vault / "4 Archives/agent/daily/2026-11-27.md").read_bytes() == old
    assert not (env.vault / "Daily/2026-11-27.md").exists()
    assert git(env.vault, "log", "-1", "--format=%s").strip().endswith("; archived 2 daily notes")
    assert result.exit_code is ExitCode.CLEAN


def test_size_warnings_come_from_the_janitor_and_every_pass(env: Env) -> None:
    (env.workspace / "HEARTBEAT.md").write_text("".join(f"- item {n}\n" for n in range(60)))
    (env.workspace / "AGENTS.md").write_text("x" * 30)
    env.cfg = replace(env.cfg, janitor=replace(env.cfg.janitor, bootstrap_max_chars=20))
    result = janitor(env.cfg, today=TODAY)
    said = {(p.path.rsplit("/", 1)[-1], p.message.split(",")[0]) for p in result.problems}
    assert ("HEARTBEAT.md", "60 lines") in said and ("AGENTS.md", "30 characters") in said
    assert result.exit_code is ExitCode.CLEAN  # warnings never block
    for report in (env.sync(), env.sync()):  # the full pass that reads it, then the quick one that says it again
        warnings = [p.message for p in report.problems if p.path.endswith("HEARTBEAT.md")]
        assert warnings and warnings[0].startswith("60 lines, over the 50-line limit")
        assert report.exit_code is ExitCode.CLEAN


def test_cli_json_is_one_document(env: Env) -> None:
    write_memory(env, MEMORY)
    args = ["janitor", "--json", "--dry-run", "--today", "2026-12-01", "--config", str(env.config_path)]
    done = subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [s["title"] for s in doc["sections"]] == ["Espresso", "X Timeline Scraping"]
    assert doc["sections"][0]["lines"] == [7, 14] and doc["dry_run"] is True


def _commits(env: Env) -> str:
    return git(env.vault, "rev-parse", "HEAD")


def _archived_lines(archive: bytes) -> list[bytes]:
    """The verbatim lines of an archive: every line but its header and the janitor's comment lines."""
    return [line for line in split_lines(archive)[3:] if not line.startswith(b"<!-- janitor ")]


# -- properties of the pure parts -------------------------------------------------------------------------------

words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=12)
days = st.dates(min_value=date(2024, 1, 1), max_value=date(2027, 1, 1))


@st.composite
def memory_files(draw: st.DrawFn) -> bytes:
    """MEMORY.md shapes from the wild: tagged and untagged headings at any level, tags with and without brackets
    around the date, L0 comments, fences holding tagged headings, tagged bullets, CRLF or LF."""
    parts = []
    for _ in range(draw(st.integers(0, 8))):
        level = draw(st.integers(1, 4))
        title = draw(words).replace("[", "(").strip("#` \t") or "t"
        forms = ["", " [P0]", " [P1] [{d}]", " [P2] [{d}]", " [P1][{d}]", " [P2] {d}", " [P1]", " [P2] [x]"]
        tag = draw(st.sampled_from(forms))
        parts.append("#" * level + " " + title + tag.format(d=draw(days).isoformat()))
        for _ in range(draw(st.integers(0, 4))):
            body = draw(st.sampled_from(["- {w}", "<!-- L0: {w} -->", "```\n## {w} [P2] [2020-01-01]\n```", "", "{w}"]))
            parts.append(body.format(w=draw(words)))
    text = "\n".join(parts) + draw(st.sampled_from(["", "\n"]))
    return text.replace("\n", "\r\n").encode() if draw(st.booleans()) else text.encode()


@settings(max_examples=200, deadline=None)
@given(memory_files(), days)
def test_no_line_is_lost_and_order_is_kept(raw: bytes, today: date) -> None:
    try:
        sections = parse_sections(raw)
    except SectionsError:
        return
    lines = split_lines(raw)
    moved = expired(sections, today, 90, 30)
    left = without_sections(lines, moved)
    archive = append_sections(None, lines, moved, today, 90, 30)
    kept_lines = [line.rstrip(b"\r\n") for line in split_lines(left)]
    archived = [line.rstrip(b"\r\n") for line in split_lines(archive)]
    moved_at = {n for s in moved for n in range(s.start, s.end)}
    assert kept_lines == [line.rstrip(b"\r\n") for n, line in enumerate(lines) if n not in moved_at]
    verbatim = [lines[n].rstrip(b"\r\n") for n in sorted(moved_at)]
    assert _in_order(verbatim, archived)
    for section in moved:
        assert section.tagged_on is not None and section.tagged_on < today - timedelta(days=29)


def _in_order(needles: list[bytes], haystack: list[bytes]) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


@settings(max_examples=300, deadline=None)
@given(words, st.sampled_from([1, 2]), days, st.sampled_from(["[P{p}] [{d}]", "[P{p}][{d}]", "[P{p}] {d}"]))
def test_the_tag_grammar(title: str, priority: int, day: date, form: str) -> None:
    title = title.replace("[", "(").strip("#` \t\\") or "t"
    raw = f"## {title} {form.format(p=priority, d=day.isoformat())}\n- body\n".encode()
    sections = parse_sections(raw)
    assert [(s.priority, s.tagged_on, s.date_problem) for s in sections] == [(priority, day, "")]
    assert not sections[0].title.endswith(f"[P{priority}]")


def test_the_default_ages() -> None:
    assert (Janitor().p1_days, Janitor().p2_days, Janitor().keep_daily_days) == (90, 30, 0)


def _janitor_killed_before(env: Env, needle: str, tmp: Path) -> subprocess.CompletedProcess[bytes]:
    """``vaultsync janitor`` killed with SIGKILL right before its first rename naming ``needle``."""
    child_env = {
        **git_env(tmp),
        "VAULTSYNC_CRASH_EVENTS": ",".join(RENAMES),
        "VAULTSYNC_CRASH_NEEDLE": needle,
        "VAULTSYNC_CRASH_AT": "1",
    }
    argv = ["janitor", "--config", str(env.config_path), "--today", TODAY.isoformat()]
    return subprocess.run(
        [sys.executable, "-c", CRASH_BOOT, *argv], env=child_env, capture_output=True, start_new_session=True
    )


def test_a_janitor_killed_between_its_two_writes_does_not_archive_twice(env: Env, tmp_path: Path) -> None:
    write_memory(env, MEMORY)
    env.sync()
    killed = _janitor_killed_before(env, f"{env.workspace}/MEMORY.md", tmp_path)
    assert killed.returncode == -9, killed.stderr
    archive = env.workspace / "memory/archive/MEMORY-2026-12.md"
    assert "## Espresso" in archive.read_text() and "## Espresso" in (env.workspace / "MEMORY.md").read_text()

    result = janitor(env.cfg, today=TODAY)

    assert [s.title for s in result.sections] == ["Espresso", "X Timeline Scraping"]
    assert result.exit_code is ExitCode.CLEAN, result.to_json()
    text = archive.read_text()
    assert text.count("## Espresso [P2]") == 1 and text.count("- cron at 02:00") == 1
    assert "Espresso" not in (env.workspace / "MEMORY.md").read_text()
    assert janitor(env.cfg, today=TODAY).sections == []


def test_a_section_archived_last_month_is_not_archived_again(env: Env) -> None:
    """Killed on the last day of a month, run again on the first of the next: the earlier archive counts."""
    raw = write_memory(env, MEMORY)
    lines = split_lines(raw)
    moved = expired(parse_sections(raw), TODAY, 30, 30)
    november = append_sections(None, lines, moved, date(2026, 11, 30), 30, 30)
    assert append_sections(None, lines, moved, TODAY, 30, 30, earlier=november) == b""
    december = append_sections(b"# kept\n", lines, moved[:1], TODAY, 30, 30)
    assert append_sections(december, lines, moved, TODAY, 30, 30).count(b"## Espresso") == 1
    assert append_sections(december, lines, moved, TODAY, 30, 30).count(b"## X Timeline") == 1


def test_a_late_edit_to_an_archived_daily_note_is_merged_once(env: Env) -> None:
    """The person adds a line to a daily note the janitor archives in the same round: the edit beats the move,
    the note comes back to memory/, and the next run merges it into the archive instead of stopping for ever."""
    env.cfg = replace(env.cfg, janitor=replace(env.cfg.janitor, keep_daily_days=2))
    note = env.vault / "Daily/2026-11-27.md"
    note.write_text(note.read_text() + "- a line the person added late\n")
    janitor(env.cfg, today=TODAY)
    archived = env.workspace / "memory/archive/daily/2026-11-27.md"
    assert (env.workspace / "memory/2026-11-27.md").exists()  # the edit won over the move

    result = janitor(env.cfg, today=TODAY)

    assert result.exit_code is ExitCode.CLEAN, result.to_json()
    assert ("memory/2026-11-27.md", "memory/archive/daily/2026-11-27.md") in result.daily
    assert not (env.workspace / "memory/2026-11-27.md").exists() and not note.exists()
    assert archived.read_text().count("- a line the person added late") == 1
    assert (env.vault / "4 Archives/agent/daily/2026-11-27.md").read_bytes() == archived.read_bytes()
    again = janitor(env.cfg, today=TODAY)
    assert again.exit_code is ExitCode.CLEAN and again.daily == []


@given(st.lists(words, max_size=8), st.lists(words, max_size=8), st.lists(words, max_size=8))
def test_merging_two_versions_of_a_daily_note_keeps_every_line(common: list[str], a: list[str], b: list[str]) -> None:
    archived = "".join(f"{w}\n" for w in common + a).encode()
    later = "".join(f"{w}\n" for w in common[:2] + b + common[2:]).encode()
    merged = merge_daily(archived, later, TODAY)
    assert merged.startswith(archived) or merged == later
    kept = set(split_lines(merged))
    assert set(split_lines(archived)) <= kept and set(split_lines(later)) <= kept
    assert merge_daily(merged, merged, TODAY) == merged


def test_problems_read_as_sentences_and_name_files_from_the_workspace(env: Env) -> None:
    write_memory(env, "# MEMORY.md\n\n## Odd [P7] [2026-01-01]\n- x\n\n## Undated [P1]\n- y\n")
    (env.workspace / "HEARTBEAT.md").write_text("".join(f"- item {n}\n" for n in range(60)))
    for dry_run in (True, False):
        found = {(p.path, p.message) for p in janitor(env.cfg, dry_run=dry_run, today=TODAY).problems}
        assert ("MEMORY.md", "line 3: section 'Odd': [P7] is not a priority (P0, P1, P2); not archived") in found
        assert ("MEMORY.md", "line 6: section 'Undated': [P1] without a date [YYYY-MM-DD]; not archived") in found
        assert [path for path, message in found if message.startswith("60 lines")] == ["HEARTBEAT.md"]
        assert not any(path.startswith("/") for path, _ in found), found
