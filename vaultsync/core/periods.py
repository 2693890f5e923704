"""The period a question names: "on 2026-03-05", "in March 2026", "2026", "last week", "yesterday".

A date in a question is not a word to look for but a range of days to favour, and a relative one ("last week")
only means something against a given today. ``period`` finds the first such phrase and says which part of the
question it took; a relative one's words ("last", "week") are no topic and are not searched for, while a named
month or year may also be written in the text and stays.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
YEAR = r"(?:19|20)\d{2}"
# A month alone ("may", "march") is a common word too: it names a period only after a preposition.
BEFORE_MONTH = r"(?:in|during|since|by|of|early|late|mid|around|throughout)"
UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30, "year": 365, "years": 365}
NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "few": 3, "couple": 2}
PATTERNS = [
    ("iso_day", re.compile(rf"\b({YEAR})-(\d{{2}})-(\d{{2}})\b")),
    ("iso_month", re.compile(rf"\b({YEAR})-(\d{{2}})\b")),
    ("month_day_year", re.compile(rf"\b({MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+({YEAR})\b", re.I)),
    ("day_month_year", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({MONTH})\.?,?\s+({YEAR})\b", re.I)),
    ("month_year", re.compile(rf"\b({MONTH})\.?,?\s+(?:of\s+)?({YEAR})\b", re.I)),
    (
        "ago",
        re.compile(
            r"\b(\d+|a|one|two|three|four|five|six|few|couple)\s+(?:of\s+)?(day|week|month|year)s?\s+ago\b", re.I
        ),
    ),
    (
        "past",
        re.compile(
            r"\b(?:past|last)\s+(\d+|two|three|four|five|six|few|couple)\s+(?:of\s+)?(days|weeks|months)\b", re.I
        ),
    ),
    ("relative", re.compile(r"\b(today|yesterday|(?:this|last|past|previous)\s+(?:week|month|year|weekend))\b", re.I)),
    ("month_day", re.compile(rf"\b(?:{BEFORE_MONTH}\s+|on\s+)?({MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b", re.I)),
    ("month", re.compile(rf"\b{BEFORE_MONTH}\s+({MONTH})\b", re.I)),
    ("year", re.compile(rf"\b(?:in|during|since|of|from)\s+({YEAR})\b|\b({YEAR})\b", re.I)),
]


@dataclass(frozen=True)
class Period:
    """Days ``first`` to ``last`` (ISO, inclusive), named by ``query[start:end]``."""

    first: str
    last: str
    start: int
    end: int
    relative: bool = False  # "last week", "3 days ago": words that are no topic, left out of the search

    def holds(self, day: str | None) -> bool:
        return bool(day) and self.first <= (day or "")[:10] <= self.last


def _month(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _latest(month: int, day: int | None, today: date) -> tuple[date, date]:
    """A month (or a day of it) named without a year: its latest occurrence not after today."""
    year = today.year if month <= today.month else today.year - 1
    if day is None:
        return _month(year, month)
    one = date(year, month, min(day, calendar.monthrange(year, month)[1]))
    return one, one


def _relative(phrase: str, today: date) -> tuple[date, date]:
    word = phrase.split()[-1]
    if phrase == "today":
        return today, today
    if phrase == "yesterday":
        return today - timedelta(days=1), today - timedelta(days=1)
    current = phrase.startswith("this")
    if word in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday())
        start = monday if current else monday - timedelta(days=7)
        return (
            (start + timedelta(days=5), start + timedelta(days=6))
            if word == "weekend"
            else (start, start + timedelta(days=6))
        )
    if word == "month":
        if current:
            return _month(today.year, today.month)
        before = today.replace(day=1) - timedelta(days=1)
        return _month(before.year, before.month)
    year = today.year if current else today.year - 1
    return date(year, 1, 1), date(year, 12, 31)


def _span(kind: str, groups: tuple[str, ...], today: date) -> tuple[date, date] | None:
    g = [x for x in groups if x is not None]
    if kind == "iso_day":
        one = date(int(g[0]), int(g[1]), int(g[2]))
        return one, one
    if kind == "iso_month":
        return _month(int(g[0]), int(g[1]))
    if kind == "month_day_year":
        one = date(int(g[2]), MONTHS[g[0].lower()], int(g[1]))
        return one, one
    if kind == "day_month_year":
        one = date(int(g[2]), MONTHS[g[1].lower()], int(g[0]))
        return one, one
    if kind == "month_year":
        return _month(int(g[1]), MONTHS[g[0].lower()])
    if kind in ("ago", "past"):
        count = int(g[0]) if g[0].isdigit() else NUMBERS[g[0].lower()]
        days = count * UNITS[g[1].lower()]
        if kind == "past":
            return today - timedelta(days=days), today
        unit = UNITS[g[1].lower()]
        centre = today - timedelta(days=days)
        return centre - timedelta(days=unit), centre + timedelta(days=unit)
    if kind == "relative":
        return _relative(" ".join(g[0].lower().split()), today)
    if kind == "month_day":
        return _latest(MONTHS[g[0].lower()], int(g[1]), today)
    if kind == "month":
        return _latest(MONTHS[g[0].lower()], None, today)
    year = int(g[0])
    return date(year, 1, 1), date(year, 12, 31)


def period(query: str, today: date) -> Period | None:
    """The first period ``query`` names, tried from the most to the least precise form; None when none."""
    for kind, pattern in PATTERNS:
        for m in pattern.finditer(query):
            try:
                span = _span(kind, m.groups(), today)
            except (ValueError, KeyError, OverflowError):  # "March 32", a year out of range
                continue
            if span:
                relative = kind in ("ago", "past", "relative")
                return Period(span[0].isoformat(), span[1].isoformat(), m.start(), m.end(), relative)
    return None
