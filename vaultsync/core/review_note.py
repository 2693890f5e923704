"""The review note (``Reviews/YYYY-Www.md``) as text: written from findings, read back for the ticked fixes, and
marked with what ``review --fix`` did; plus the generated section of summary.md. Pure: text in, text out.

Each fix is one task line whose trailing comment (hidden in Obsidian's reading view) says exactly what ticking
it does, so ``--fix`` never guesses from the prose a person may have edited around it:
``- [ ] supersede [[s-7]] by [[s-9]] <!-- vaultsync-fix: ["supersede", "areas/people/sarah", "s-7", "s-9"] -->``
(a JSON list, so a folder name with spaces stays one field; notes written before read as space-separated words).

One line model for reading, marking and rewriting the note (``note_lines``): lines end at LF only, as in
Obsidian; U+2028 and the other breaks ``str.splitlines`` knows are text within a line, so a line number read
is the line marked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from itertools import groupby
from typing import Any

from vaultsync.core.review import Finding, Fix
from vaultsync.model import Record

__all__ = [
    "ReviewNoteError",
    "TickedFix",
    "generated_section",
    "keep_typed",
    "mark_applied",
    "note_lines",
    "review_note",
    "ticked",
    "typed_lines",
    "week_of",
]

TASK = re.compile(r"^\s*- \[(?P<mark>.)\] .*<!-- vaultsync-fix: (?P<spec>[^>]*?) -->\s*$")
APPLIED = " (applied {day})"
APPLIED_MARK = re.compile(r"\(applied \d{4}-\d{2}-\d{2}\)")
TITLE = "# Memory review "
NOTHING = "Nothing to review: no contradictions, dangling links or stale summaries found."
TICK = "Tick the fixes you want, then run `vaultsync review --fix`; unticked ones change nothing."
FINDING = re.compile(r"^- \*\*[a-z-]+\*\*: ")
BEGIN = "<!-- vaultsync:generated (vaultsync review --regenerate rewrites what lies between these lines) -->"
END = "<!-- /vaultsync:generated -->"


class ReviewNoteError(ValueError):
    """A ticked task that cannot be applied as written; the message names the line."""


@dataclass(frozen=True)
class TickedFix:
    line: int  # 0-based line of the task in the note
    entity: str
    fix: Fix


def week_of(day: date) -> str:
    """``2026-W49``: the ISO week, the name of that week's review note."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def review_note(
    week: str, findings: Sequence[Finding], link: Callable[[str, str], str], entity_link: Callable[[str], str]
) -> str:
    """The note for ``week``: the findings by entity, each fix a task line. ``link(rel, id)`` is a fact's
    wiki-link, ``entity_link(rel)`` an entity's."""
    lines = [f"{TITLE}{week}", ""]
    lines.append(TICK if findings else NOTHING)
    for rel, group in groupby(findings, key=lambda f: f.entity):
        lines += ["", f"## {entity_link(rel)}", ""]
        for finding in group:
            lines.append(f"- **{finding.kind}**: {_linked(finding.message, rel, finding.ids, link)}")
            for fix in finding.fixes:
                lines.append(f"  - [ ] {_say(fix, rel, link)} <!-- vaultsync-fix: {_spec(rel, fix)} -->")
    return "\n".join(lines) + "\n"


def _linked(message: str, rel: str, ids: Sequence[str], link: Callable[[str, str], str]) -> str:
    for fid in sorted(set(ids), key=len, reverse=True):
        message = re.sub(rf"(?<![\w\[|-]){re.escape(fid)}(?![\w\]-])", link(rel, fid), message)
    return message


def _say(fix: Fix, rel: str, link: Callable[[str, str], str]) -> str:
    if fix.action == "supersede":
        return f"supersede {link(rel, fix.ids[0])} by {link(rel, fix.by)}"
    return "regenerate the summary from the active facts"


def _spec(rel: str, fix: Fix) -> str:
    # ``<`` and ``>`` escaped, so that no id or folder name can end the comment early.
    words = [fix.action, rel, *fix.ids, *([fix.by] if fix.by else [])]
    return json.dumps(words, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")


def _words(spec: str) -> list[str] | None:
    """The fields of a fix comment: a JSON list of strings, or (notes written before) words split on spaces,
    a folder name with spaces taking every word between the action and the ids."""
    if spec.startswith("["):
        try:
            words = json.loads(spec)
        except ValueError:
            return None
        return words if isinstance(words, list) and all(isinstance(w, str) for w in words) else None
    words = spec.split()
    if len(words) >= 4 and words[0] == "supersede":
        return [words[0], " ".join(words[1:-2]), words[-2], words[-1]]
    if len(words) >= 2 and words[0] == "regenerate":
        return [words[0], " ".join(words[1:])]
    return words


def note_lines(text: str) -> list[str]:
    """The note's lines, split at LF only (a CR before it stays on its line): what Obsidian shows as lines."""
    return text.split("\n")


def ticked(text: str) -> list[TickedFix]:
    """The fixes a person ticked and ``--fix`` has not applied yet; raises ``ReviewNoteError`` for a ticked task
    whose instruction no longer reads as one (the whole note is then left alone)."""
    out = []
    for n, line in enumerate(note_lines(text)):
        task = TASK.match(line)
        if not task or task.group("mark") not in "xX" or APPLIED_MARK.search(line):
            continue
        words = _words(task.group("spec")) or []
        if len(words) == 4 and words[0] == "supersede":
            out.append(TickedFix(n, words[1], Fix("supersede", (words[2],), words[3])))
        elif len(words) == 2 and words[0] == "regenerate":
            out.append(TickedFix(n, words[1], Fix("regenerate")))
        else:
            raise ReviewNoteError(f"line {n + 1}: a ticked task whose instruction {task.group('spec')!r} is not a fix")
    return out


def mark_applied(text: str, lines: Sequence[int], day: date) -> str:
    """The note with each applied task saying so, so the next ``--fix`` does not apply it again."""
    out = note_lines(text)
    for n in lines:
        head, sep, tail = out[n].rpartition(" <!-- vaultsync-fix:")
        out[n] = f"{head}{APPLIED.format(day=day.isoformat())}{sep}{tail}"
    return "\n".join(out)


def _anchor(line: str) -> str | None:
    """What a line vaultsync writes stands for (its place in a rewritten note); None for a line the person
    typed, and for a task they ticked: a note a person wrote in is theirs."""
    text = line.rstrip("\r")
    task = TASK.match(text)
    if task:
        return None if task.group("mark") != " " or APPLIED_MARK.search(text) else f"fix {task.group('spec')}"
    if text.startswith(TITLE) or text in (NOTHING, TICK):
        return "head"
    if text.startswith("## ") or FINDING.match(text):
        return text
    return None


def typed_lines(text: str) -> list[str]:
    """The lines of a review note that are the person's: what ``keep_typed`` keeps."""
    return [line for line in note_lines(text) if _anchor(line) is None and line.strip()]


def keep_typed(old: str, new: str) -> str:
    """``new`` (a fresh review of the week) with every line the person typed into ``old`` kept, once, after the
    line of vaultsync's it followed (or the nearest earlier one still there; else after the title)."""
    lines = note_lines(new)
    last = {key: n for n, line in enumerate(lines) if (key := _anchor(line)) is not None}
    placed: dict[str, list[str]] = {}
    anchors: list[str] = ["head"]
    for line in note_lines(old):
        key = _anchor(line)
        if key is not None:
            anchors.append(key)
        elif line.strip():
            at = next((a for a in reversed(anchors) if a in last), "head")
            placed.setdefault(at, []).append(line.rstrip("\r"))
    if not placed:
        return new
    out: list[str] = []
    for n, line in enumerate(lines):
        out.append(line)
        key = _anchor(line)
        if key is not None and last.get(key) == n and key in placed:
            out += placed.pop(key)
    return "\n".join(out)


def generated_section(summary: str, facts: Sequence[Record], newline: str = "\n") -> str:
    """summary.md with its generated section (active facts by category, newest first) put in place of the old
    one, or added at the end; the prose outside the markers stays as it is."""
    active = [f for f in facts if isinstance(f, dict) and f.get("status", "active") == "active" and f.get("fact")]
    by_category: dict[str, list[Record]] = {}
    for fact in sorted(active, key=lambda f: str(f.get("timestamp", "")), reverse=True):
        by_category.setdefault(str(fact.get("category") or "other"), []).append(fact)
    body = [BEGIN]
    for category in sorted(by_category):
        body += ["", f"## {category.capitalize()}", ""]
        body += [
            f"- {_one_line(f['fact'])}" + (f" ({f['timestamp']})" if f.get("timestamp") else "")
            for f in by_category[category]
        ]
    body += ["", END]
    block = newline.join(body)
    start, end = summary.find(BEGIN), summary.find(END)
    if start != -1 and end > start:
        return summary[:start] + block + summary[end + len(END) :]
    sep = (
        "" if not summary or summary.endswith(newline * 2) else (newline if summary.endswith(newline) else newline * 2)
    )
    return summary + sep + block + newline


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())
