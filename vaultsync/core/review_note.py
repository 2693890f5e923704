"""The review note (``Reviews/YYYY-Www.md``) as text: written from findings, read back for the ticked fixes, and
marked with what ``review --fix`` did; plus the generated section of summary.md. Pure: text in, text out.

Each fix is one task line whose trailing comment (hidden in Obsidian's reading view) says exactly what ticking
it does, so ``--fix`` never guesses from the prose a person may have edited around it:
``- [ ] supersede [[s-7]] by [[s-9]] <!-- vaultsync-fix: supersede areas/people/sarah s-7 s-9 -->``
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from itertools import groupby
from typing import Any

from vaultsync.core.review import Finding, Fix
from vaultsync.model import Record

__all__ = ["ReviewNoteError", "TickedFix", "generated_section", "mark_applied", "review_note", "ticked", "week_of"]

TASK = re.compile(r"^\s*- \[(?P<mark>.)\] .*<!-- vaultsync-fix: (?P<spec>[^>]*?) -->\s*$")
APPLIED = " (applied {day})"
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
    lines = [f"# Memory review {week}", ""]
    if not findings:
        lines.append("Nothing to review: no contradictions, dangling links or stale summaries found.")
    else:
        lines.append("Tick the fixes you want, then run `vaultsync review --fix`; unticked ones change nothing.")
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
    return " ".join([fix.action, rel, *fix.ids, *([fix.by] if fix.by else [])])


def ticked(text: str) -> list[TickedFix]:
    """The fixes a person ticked and ``--fix`` has not applied yet; raises ``ReviewNoteError`` for a ticked task
    whose instruction no longer reads as one (the whole note is then left alone)."""
    out = []
    for n, line in enumerate(text.splitlines()):
        task = TASK.match(line)
        if not task or task.group("mark") not in "xX":
            continue
        if re.search(r"\(applied \d{4}-\d{2}-\d{2}\)", line):
            continue
        words = task.group("spec").split()
        if len(words) == 4 and words[0] == "supersede":
            out.append(TickedFix(n, words[1], Fix("supersede", (words[2],), words[3])))
        elif len(words) == 2 and words[0] == "regenerate":
            out.append(TickedFix(n, words[1], Fix("regenerate")))
        else:
            raise ReviewNoteError(f"line {n + 1}: a ticked task whose instruction {task.group('spec')!r} is not a fix")
    return out


def mark_applied(text: str, lines: Sequence[int], day: date, newline: str = "\n") -> str:
    """The note with each applied task saying so, so the next ``--fix`` does not apply it again."""
    out = text.split(newline)
    for n in lines:
        head, sep, tail = out[n].rpartition(" <!-- vaultsync-fix:")
        out[n] = f"{head}{APPLIED.format(day=day.isoformat())}{sep}{tail}"
    return newline.join(out)


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
