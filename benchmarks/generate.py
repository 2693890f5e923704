"""A deterministic generator of synthetic agent memory trees, for benchmarks at 5k, 50k and 200k facts.

Benchmarks are only worth comparing across runs and machines when every run feeds vaultsync the very same
bytes, so everything here is drawn from one ``random.Random(seed)`` and iterated in a fixed order (no sets,
no dict ordering that depends on hashing, no clock). The shapes copy what real workspaces hold (see
``/work/shared/corpus/README.md``): bare arrays and ``{"entity", "facts"}`` / ``{"type", "name", "items"}``
wrappers, facts without ids that carry a ``date`` instead of a ``timestamp``, short ids such as ``f001``
reused in every entity, ``superseded_by`` holding free text, extra keys the agent added, Chinese text, facts
naming other entities, and a daily note now and then far longer than the rest. A tree that is too regular
would flatter caches and branch predictors and hide the slow paths that real data takes.

Usage: ``python benchmarks/generate.py OUT --facts 50000`` writes ``OUT/workspace`` and ``OUT/life``.
"""

# Full-width punctuation in the Chinese templates is the point: real agents write it.
# ruff: noqa: RUF001

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from vocabulary import (
    CATEGORIES,
    CN_FAMILY,
    CN_GIVEN,
    CODENAMES,
    COMPANY_A,
    COMPANY_B,
    COMPANY_C,
    DAILY_EN,
    DAILY_ZH,
    DAYS,
    DAYS_ZH,
    EN_FACTS,
    FIRST,
    GENERIC,
    KIND_PHRASE,
    LAST,
    SOURCES,
    STATUS_OTHER,
    THINGS,
    TOPICS,
    ZH_FACTS,
)

END_DATE = date(2026, 12, 1)  # the newest daily note; a fixed date keeps the tree independent of the clock
DEFAULT_FACTS_PER_ENTITY = 25
FACTS_PER_DAY = 50  # 50k facts come with 1,000 daily notes, as in the issue; other scales keep the proportion
CHINESE_SHARE = 0.10


@dataclass
class Stats:
    """What a generated tree holds, so a benchmark can report per-fact figures and check the shape it asked for."""

    entities: int = 0
    facts: int = 0
    superseded: int = 0
    idless: int = 0
    chinese: int = 0
    wrapped: int = 0
    daily_notes: int = 0
    files: int = 0
    bytes: int = 0


@dataclass
class _Entity:
    rel: str  # memory-side path under life/, e.g. "areas/people/sarah-chen"
    slug: str
    name: str  # display name, the summary's H1
    kind: str  # what the summary and tags talk about: person, company, project, resource


class _Writer:
    """Writes files and counts them, so Stats cannot drift from what is on disk."""

    def __init__(self, root: Path, stats: Stats) -> None:
        self.root = root
        self.stats = stats

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode()
        path.write_bytes(data)
        self.stats.files += 1
        self.stats.bytes += len(data)


def _slugify(name: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in name.lower()).split())


def _unique(rng: random.Random, taken: set[str], make: Any) -> tuple[str, str]:
    """Draw (display name, slug) pairs until one is new; after a few misses, qualify the name to force it."""
    for attempt in range(50):
        name, slug = make()
        if attempt >= 5:
            n = rng.randint(2, 999)
            name, slug = f"{name} {n}", f"{slug}-{n}"
        if slug not in taken:
            taken.add(slug)
            return name, slug
    raise RuntimeError("could not draw a unique entity name")


def _entities(rng: random.Random, count: int) -> list[_Entity]:
    """PARA mix close to real trees: people and companies under areas/, then projects, resources, archives."""
    taken: set[str] = set()
    result: list[_Entity] = []

    def person() -> tuple[str, str]:
        if rng.random() < CHINESE_SHARE:
            (fz, fp), (gz, gp) = rng.choice(CN_FAMILY), rng.choice(CN_GIVEN)
            return f"{fz}{gz} ({fp} {gp})", _slugify(f"{fp} {gp}")
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        return name, _slugify(name)

    def company() -> tuple[str, str]:
        name = f"{rng.choice(COMPANY_A)}{rng.choice(COMPANY_B)} {rng.choice(COMPANY_C)}"
        return name, _slugify(name)

    def project() -> tuple[str, str]:
        name = f"Project {rng.choice(CODENAMES)} {rng.choice(CODENAMES)}"
        return name, _slugify(name.removeprefix("Project "))

    def resource() -> tuple[str, str]:
        name = rng.choice(TOPICS).title()
        return name, _slugify(name)

    for i in range(count):
        roll = (i * 7919 % 100) / 100 if i < 20 else rng.random()  # the first few cover every kind
        if roll < 0.50:
            name, slug = _unique(rng, taken, person)
            result.append(_Entity(f"areas/people/{slug}", slug, name, "person"))
        elif roll < 0.70:
            name, slug = _unique(rng, taken, company)
            result.append(_Entity(f"areas/companies/{slug}", slug, name, "company"))
        elif roll < 0.85:
            name, slug = _unique(rng, taken, project)
            result.append(_Entity(f"projects/{slug}", slug, name, "project"))
        elif roll < 0.95:
            name, slug = _unique(rng, taken, resource)
            result.append(_Entity(f"resources/{slug}", slug, name, "resource"))
        else:
            name, slug = _unique(rng, taken, person if rng.random() < 0.5 else company)
            result.append(_Entity(f"archives/{slug}", slug, name, "archived"))
    return result


def _fact_counts(rng: random.Random, n: int, facts: int) -> list[int]:
    """Spread exactly ``facts`` over ``n`` entities, unevenly (some entities are busy), but never below one."""
    if n == 0:
        return []
    counts = [facts // n + (1 if i < facts % n else 0) for i in range(n)]
    for _ in range(n):
        a, b = rng.randrange(n), rng.randrange(n)
        move = rng.randint(0, max(0, counts[a] - 1) // 2)
        counts[a] -= move
        counts[b] += move
    return counts


def _fill(rng: random.Random, template: str, name: str, other: str) -> str:
    when = END_DATE - timedelta(days=rng.randint(0, 900))
    return template.format(
        name=name,
        other=other,
        thing=rng.choice(THINGS),
        when=when.isoformat(),
        day=rng.choice(DAYS),
        dayzh=rng.choice(DAYS_ZH),
        hour=rng.randint(8, 17),
        num=rng.randint(2, 90) * 500,
        small=rng.randint(2, 6),
        n=rng.randint(1, 12),
    )


def _facts(rng: random.Random, ent: _Entity, count: int, pool: list[_Entity], share: float, stats: Stats) -> list:
    """One entity's facts in one of the id styles real trees use, with superseded chains and extra keys."""
    style = rng.random()
    ids = "slug" if style < 0.75 else "short" if style < 0.88 else "none"
    date_key = "date" if ids == "none" else "timestamp"
    sup_key = "superseded_by" if ids == "none" or rng.random() < 0.1 else "supersededBy"
    day0 = END_DATE - timedelta(days=rng.randint(30, 1500))
    span = max(1, (END_DATE - day0).days)
    records: list[dict[str, Any]] = []
    for i in range(count):
        other = rng.choice(pool).name if rng.random() < 0.4 else rng.choice(GENERIC)
        chinese = rng.random() < CHINESE_SHARE
        text = _fill(rng, rng.choice(ZH_FACTS if chinese else EN_FACTS), ent.name, other)
        stats.chinese += chinese
        record: dict[str, Any] = {}
        if ids == "slug":
            record["id"] = f"{ent.slug}-{i + 1:03d}"
        elif ids == "short":
            record["id"] = f"f{i + 1:03d}"
        else:
            stats.idless += 1
        when = day0 + timedelta(days=span * i // max(1, count))
        record |= {"fact": text, "category": rng.choice(CATEGORIES), date_key: when.isoformat()}
        record["source"] = rng.choice(SOURCES) if rng.random() < 0.6 else f"memory/{when.isoformat()}.md"
        record["status"] = "active" if rng.random() > 0.01 else rng.choice(STATUS_OTHER)
        if ids == "slug" and rng.random() < 0.5:
            record[sup_key] = None  # some agents write the key on every fact
        if rng.random() < 0.3:
            record["relatedEntities"] = [rng.choice(pool).slug for _ in range(rng.randint(1, 3))]
            record["lastAccessed"] = (when + timedelta(days=rng.randint(0, 60))).isoformat()
            record["accessCount"] = rng.randint(1, 40)
        records.append(record)
    # Supersede the requested share: each superseded fact points at a later fact of the same entity.
    for i in range(count - 1):
        if rng.random() < share and records[i]["status"] == "active":
            records[i]["status"] = "superseded"
            later = records[rng.randint(i + 1, count - 1)]
            records[i][sup_key] = later.get("id", "Replaced by a newer fact after a review")
            stats.superseded += 1
    return records


def _items_text(rng: random.Random, ent: _Entity, records: list, stats: Stats) -> str:
    shape = rng.random()
    indent = 2 if rng.random() < 0.85 else 4
    if shape < 0.70:
        doc: Any = records
    elif shape < 0.85:
        doc = {"entity": ent.name, "facts": records}
        stats.wrapped += 1
    else:
        doc = {"type": ent.kind, "name": ent.name, "items": records}
        stats.wrapped += 1
    return json.dumps(doc, indent=indent, ensure_ascii=rng.random() < 0.1) + "\n"


def _summary(rng: random.Random, ent: _Entity, records: list, pool: list[_Entity]) -> str:
    others = [rng.choice(pool).name for _ in range(3)]
    since = next((str(r.get("timestamp") or r.get("date")) for r in records[:1]), "2025")
    lines = []
    if rng.random() < 0.05:
        lines += ["---", f"type: {ent.kind}", f"reviewed: {END_DATE.isoformat()}", "---"]
    lines += [
        f"# {ent.name}",
        "",
        f"{ent.name} is {KIND_PHRASE[ent.kind]} Nora has dealt with since {since}."
        f" Most threads involve {others[0]} and {others[1]}; {others[2]} comes up now and then.",
        "",
    ]
    if rng.random() < CHINESE_SHARE:
        lines += [f"{ent.name}的情况：最近主要在跟{others[0]}合作，沟通以微信为主。", ""]
    active = [r for r in records if r.get("status") == "active"][:5]
    if active:
        lines += ["## Key facts"] + [f"- {r['fact']}" for r in active]
    return "\n".join(lines) + "\n"


def _daily(rng: random.Random, day: date, pool: list[_Entity], big: bool) -> str:
    lines = [f"# {day.isoformat()}", ""]
    minutes = 8 * 60
    for _ in range(rng.randint(5, 25) if not big else 900):
        minutes = min(minutes + rng.randint(3, 40), 23 * 60 + 59) if not big else minutes
        chinese = rng.random() < CHINESE_SHARE
        text = _fill(rng, rng.choice(DAILY_ZH if chinese else DAILY_EN), rng.choice(pool).name, rng.choice(pool).name)
        lines.append(f"- {minutes // 60:02d}:{minutes % 60:02d} {text}")
    if rng.random() < 0.3:
        lines += ["", "## Notes", "", f"Spent most of the day on the {rng.choice(THINGS)}."]
    return "\n".join(lines) + "\n"


def _memory_md(rng: random.Random, pool: list[_Entity]) -> str:
    lines = ["# MEMORY.md", "", f"*Last updated: {END_DATE.isoformat()}*", ""]
    for s in range(12):
        tag = "[P0]" if s < 3 else f"[P{1 + s % 2}] [{(END_DATE - timedelta(days=7 * s)).isoformat()}]"
        lines += [f"## {rng.choice(THINGS).title()} {s + 1} {tag}"]
        for _ in range(rng.randint(4, 12)):
            lines.append(f"- {_fill(rng, rng.choice(EN_FACTS), rng.choice(pool).name, rng.choice(pool).name)}")
        if s == 5:
            lines.append(f"- [P2][{END_DATE.isoformat()}] 和{pool[0].name}确认了下个月的行程")
        lines.append("")
    return "\n".join(lines)


def _heartbeat_md(rng: random.Random, pool: list[_Entity]) -> str:
    lines = ["# HEARTBEAT.md", "", "## Last checked"]
    lines += [
        f"- {what}: {END_DATE.isoformat()} 08:{10 + i:02d}" for i, what in enumerate(("Email", "Calendar", "Signal"))
    ]
    lines += ["", "## Open items"] + [f"- Waiting on {rng.choice(pool).name} ({rng.choice(THINGS)})" for _ in range(8)]
    return "\n".join(lines) + "\n"


def generate(
    root: Path, entities: int, facts_per_entity: int, days: int, superseded_share: float = 0.2, seed: int = 0
) -> Stats:
    """Write ``root/workspace`` and ``root/life`` holding ``entities * facts_per_entity`` facts and ``days`` notes.

    The same arguments always give byte-identical trees, which is what lets a benchmark compare runs. About 1%
    of entities have only a summary (they count as entities but hold no facts; their share of facts goes to the
    others, so the fact total is exact) and about 2% have only an items.json.
    """
    rng = random.Random(seed)
    stats = Stats()
    out = _Writer(root, stats)
    ents = _entities(rng, entities)
    summary_only = {i for i in range(len(ents)) if i >= 20 and rng.random() < 0.01}
    bearing = [i for i in range(len(ents)) if i not in summary_only]
    counts = dict(zip(bearing, _fact_counts(rng, len(bearing), entities * facts_per_entity), strict=True))
    for i, ent in enumerate(ents):
        stats.entities += 1
        records = _facts(rng, ent, counts[i], ents, superseded_share, stats) if i in counts else []
        stats.facts += len(records)
        if i in counts:
            out.write(f"life/{ent.rel}/items.json", _items_text(rng, ent, records, stats))
        if i not in counts or i < 20 or rng.random() >= 0.02:
            out.write(f"life/{ent.rel}/summary.md", _summary(rng, ent, records, ents))
    out.write("workspace/MEMORY.md", _memory_md(rng, ents))
    out.write("workspace/HEARTBEAT.md", _heartbeat_md(rng, ents))
    for d in range(days):
        day = END_DATE - timedelta(days=days - 1 - d)
        out.write(f"workspace/memory/{day.isoformat()}.md", _daily(rng, day, ents, big=d % 500 == min(250, days // 2)))
        stats.daily_notes += 1
    for year in range(max(1, days // 365)):
        month = END_DATE.replace(day=1) - timedelta(days=365 * (year + 1))
        out.write(f"workspace/memory/archive/{month:%Y-%m}.md", _memory_md(rng, ents))
    return stats


def scale_args(facts: int) -> dict[str, int]:
    """The issue's proportions: 25 facts per entity and one daily note per 50 facts (50k -> 2,000 x 25, 1,000)."""
    return {
        "entities": max(1, facts // DEFAULT_FACTS_PER_ENTITY),
        "facts_per_entity": DEFAULT_FACTS_PER_ENTITY,
        "days": max(1, facts // FACTS_PER_DAY),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a deterministic synthetic memory tree (workspace/ and life/).")
    parser.add_argument("out", type=Path, help="folder to write into (must be empty or missing)")
    parser.add_argument("--facts", type=int, default=5000, help="total facts (sets entities and days; default 5000)")
    parser.add_argument("--entities", type=int, help="override the entity count (default facts / 25)")
    parser.add_argument("--facts-per-entity", type=int, help="override facts per entity (default 25)")
    parser.add_argument("--days", type=int, help="override the number of daily notes (default facts / 50)")
    parser.add_argument("--superseded-share", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        print(f"{args.out}: not empty; refusing to mix two trees", file=sys.stderr)
        return 2
    shape = scale_args(args.facts)
    fpe = args.facts_per_entity or shape["facts_per_entity"]
    entities = args.entities or max(1, args.facts // fpe)
    days = args.days if args.days is not None else shape["days"]
    stats = generate(args.out, entities, fpe, days, args.superseded_share, args.seed)
    print(json.dumps(asdict(stats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
