"""Which slugs and fact ids may become file names, on every OS Obsidian runs on."""

from __future__ import annotations

import re
import unicodedata
from datetime import date

_FORBIDDEN = re.compile(r'[\\/:*?"<>|#^\[\]]')
_UNSEEN = ("Cc", "Cf", "Zl", "Zp")  # control, format, line and paragraph separator characters
_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$", re.IGNORECASE)
MAX_NAME = 120
# Bytes the names made from an entity's folder name add to it: fact ids (``<slug>-001``, ``<slug>-m1000``), a
# note's name for an id-less fact (``<slug>-1a2b3c``) and the ``~2`` a taken name gets.
SLUG_ROOM = 12
MAX_SLUG = MAX_NAME - SLUG_ROOM
DAILY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
# A note the agent keeps for one moment of a day: OpenClaw's session notes (``2026-12-01-1430.md``, with ``-2``
# when that name is taken) and slugged notes (``2026-12-01-vendor-pitch.md``).
SESSION_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-[^/]+\.md$")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a file name in the vault, or None when it can.

    Path separators and ``..`` would write outside the unit's folder; the other characters are rejected by
    Windows or break Obsidian's links (``#`` headings, ``^`` blocks, ``[]`` and ``|`` link syntax).
    """
    if not name:
        return "empty name"
    if name in (".", ".."):
        return f"{name!r} is not a usable name"
    if _FORBIDDEN.search(name):
        bad = sorted(set(_FORBIDDEN.findall(name)))
        return f"name {name!r} contains {' '.join(bad)}, which Obsidian or Windows reject in file names"
    # Every fact id and folder name is checked (44,000 at 50k facts): a character at a time only for a name
    # ``isprintable`` refuses, which it does for each of these categories (and for a few more, as a no-break space).
    if not name.isprintable() and any(unicodedata.category(c) in _UNSEEN for c in name):
        return f"name {name!r} contains control characters"
    if name != name.strip() or name.endswith("."):
        return f"name {name!r} starts or ends with a space or ends with a dot"
    if name.startswith("."):
        return f"name {name!r} starts with a dot, which hides the file"
    if _WINDOWS_RESERVED.match(name):
        return f"name {name!r} is reserved on Windows"
    if len(name.encode()) > MAX_NAME:
        return f"name {name[:20]!r}... is longer than {MAX_NAME} bytes"
    return None


def slug_problem(slug: str) -> str | None:
    """Why ``slug`` cannot name a new entity, or None when it can: it must be a name (``name_problem``) with room
    left for the names made from it, or the entity's first fact would get an id no pass can hold."""
    problem = name_problem(slug)
    if problem:
        return problem
    size = len(slug.encode())
    if size > MAX_SLUG:
        return (
            f"entity name {slug[:20]!r}... is {size} bytes; a new entity's folder name may be at most {MAX_SLUG}"
            f" bytes (UTF-8), so that its fact ids ({slug[:8]}...-001) stay within the {MAX_NAME}-byte name limit;"
            " choose a shorter slug"
        )
    return None


def derived_problem(name: str) -> str | None:
    """Why a name vaultsync makes (a fact id minted from the entity's pattern) cannot be written, with the fix."""
    problem = name_problem(name)
    if problem and len(name.encode()) > MAX_NAME:
        return f"{problem}: the id made from the entity's name would not fit; choose a shorter slug for the entity"
    return problem


def composed(name: str) -> str:
    """The name in NFC: macOS and the sync apps that copy from it hand out names decomposed (``jose\u0301``) that
    are the same name as the composed ``josé`` a Linux side wrote."""
    return name if name.isascii() else unicodedata.normalize("NFC", name)


def fold(name: str) -> str:
    """The form under which two names collide on case-insensitive file systems (macOS, Windows).

    ASCII is its own NFC form and casefolds as it lowercases: the quick path for nearly every note name, which a
    scoped pass folds for each of the base's keys (200,000 at 200k facts).
    """
    if name.isascii():
        return name.lower()
    return unicodedata.normalize("NFC", name).casefold()


def daily_date(name: str) -> date | None:
    """The date a daily-note file name stands for; None when it is not one or is an impossible date."""
    m = DAILY_NAME.match(name)
    if not m:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def session_date(name: str) -> date | None:
    """The day a session or slugged note's file name (``2026-12-01-1430.md``) belongs to; None for any other
    name, a daily note's included, and for an impossible date."""
    m = SESSION_NAME.match(name)
    if not m:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def day_note_date(name: str) -> date | None:
    """The day a note shown with its day stands for: a daily note or a session note of that day."""
    return daily_date(name) or session_date(name)
