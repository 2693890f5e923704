"""How often the shrink guard holds a normal day: its false-hold rate with the default ``[safety]`` bounds.

Two sources of ordinary change, each judged by the guard's pure rule (``core/shrink.py``) exactly as a pass
feeds it (units decided from base, memory and vault):

- **the corpus's real workspaces** (``../shared/corpus/`` beside the repository, or ``--corpus DIR``): each is
  one snapshot (the corpus keeps no consecutive ones), so each is taken as the day before and given a normal
  day's work on its real files, once by the agent and once by the person in the vault: a line or two added to
  MEMORY.md and USER.md, the newest daily note extended, a new daily note, a fact added to and one superseded
  in every entity, a line added to every summary, one fact deleted;
- **a generated year of ordinary agent activity** (``--days``, seeded): each day a new daily note, MEMORY.md
  growing and now and then tidied (up to a fifth of its lines dropped), facts added, superseded and
  occasionally deleted, entities created, summaries rewritten a line longer or shorter, the janitor archiving
  MEMORY.md sections and old daily notes (changes it means), and the person in Obsidian now and then editing a
  fact, deleting one fact or one daily note.

A hold on any of those days is a false hold. As a control, the cases the guard must catch (MEMORY.md 70 -> 3
lines, four of five daily notes deleted, an entity's facts emptied, a summary cut to one line, a person deleting
the daily notes) are applied to the generated workspace and must each be held.

    python benchmarks/false_holds.py [--corpus DIR] [--days 365] [--seed 47]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from vaultsync.config import Layout, Safety
from vaultsync.core.merge import decide_all
from vaultsync.core.shrink import find_held
from vaultsync.core.world import World
from vaultsync.keys import ENTITY, FACT, FILE, entity_key, fact_key, file_key
from vaultsync.memory.tree import scan_memory
from vaultsync.model import EntityContent, Held
from vaultsync.vault.layout import VaultLayout

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"
LAYOUT = VaultLayout(Layout())
Units = dict[str, tuple[str, Any]]  # unit key -> (kind, value)


def held(before: Units, agent: Units, person: Units, meant: Iterable[str] = ()) -> list[Held]:
    """What the guard holds when the agent turned ``before`` into ``agent`` and the person into ``person``."""
    world = World()
    for key in set(before) | set(agent) | set(person):
        kind = (before.get(key) or agent.get(key) or person.get(key))[0]
        state = world.unit(key, kind)
        state.base, state.memory, state.vault = (
            u[1] if (u := side.get(key)) else None for side in (before, agent, person)
        )
    decide_all(world)
    return find_held(world, Safety(), LAYOUT, frozenset(meant))


def lines_of(text: bytes) -> list[bytes]:
    return text.splitlines(keepends=True)


# -- the corpus ---------------------------------------------------------------------------------------------------
def read_workspace(folder: Path) -> Units:
    """A real workspace's units as a pass reads them: its mirrored files, facts and summaries."""
    life = folder / "life"
    scan = scan_memory(folder, life if life.is_dir() else folder / ".no-life", frozenset())
    units: Units = {file_key(m): (FILE, f.raw) for m, f in scan.files.items() if not f.broken}
    for rel, entity in scan.entities.items():
        for position, record in entity.facts:
            note = str(record.get("id") or f"n{position}")
            units[fact_key(rel, note)] = (FACT, record)
        if entity.summary is not None:
            units[entity_key(rel)] = (ENTITY, entity.content)
    return units


def normal_day(units: Units, today: str) -> Units:
    """A day's ordinary work on ``units``: added lines and facts, one superseded, one fact deleted."""
    day = dict(units)
    for name in ("workspace/MEMORY.md", "workspace/USER.md"):
        if file_key(name) in day:
            day[file_key(name)] = (FILE, day[file_key(name)][1] + b"- learned something new today\n")
    dailies = sorted(k for k in day if k.startswith("file:workspace/memory/") and k.count("/") == 2)
    if dailies:
        day[dailies[-1]] = (FILE, day[dailies[-1]][1] + b"- one more thing from the evening\n")
    day[file_key(f"workspace/memory/{today}.md")] = (FILE, f"# {today}\n\n- started the day\n".encode())
    deleted = False
    for rel in sorted({k.partition(":")[2].partition("#")[0] for k in day if k.startswith("fact:")}):
        facts = sorted(k for k in day if k.startswith(f"fact:{rel}#"))
        day[fact_key(rel, f"new-{today}")] = (FACT, {"id": f"new-{today}", "fact": "A new fact", "status": "active"})
        first = day[facts[0]][1]
        day[facts[0]] = (FACT, {**first, "status": "superseded"})
        if not deleted and len(facts) > 3:
            del day[facts[-1]]
            deleted = True
    for key, (kind, value) in list(day.items()):
        if kind == ENTITY:
            day[key] = (ENTITY, EntityContent(value.props, value.body + "One more line.\n"))
    return day


def workspace_of(folder: Path) -> Path:
    """Where a corpus entry keeps its workspace: its top, or the folder holding its MEMORY.md (a template's)."""
    if (folder / "MEMORY.md").is_file() or (folder / "life").is_dir():
        return folder
    return next((p.parent for p in sorted(folder.rglob("MEMORY.md"))), folder)


def corpus_days(corpus: Path) -> tuple[int, list[tuple[str, list[Held]]]]:
    folders = sorted(p for p in corpus.iterdir() if p.is_dir())
    found = []
    for folder in folders:
        units = read_workspace(workspace_of(folder))
        if not units:
            continue
        after = normal_day(units, "2026-12-08")
        found.append((f"{folder.name} (agent)", held(units, after, units)))
        found.append((f"{folder.name} (person)", held(units, units, after)))
    return len(folders), found


# -- a generated year ---------------------------------------------------------------------------------------------
class Year:
    """A workspace living a year of ordinary days, one snapshot a day."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.day = date(2026, 1, 1)
        self.memory = [f"- lesson {n}\n".encode() for n in range(40)]
        self.user = [f"- prefers {n}\n".encode() for n in range(12)]
        self.dailies: dict[str, list[bytes]] = {}
        self.facts: dict[str, dict[str, dict[str, Any]]] = {
            f"areas/people/p{n}": {f"p{n}-{i}": self._fact(f"p{n}-{i}") for i in range(4)} for n in range(8)
        }
        self.summaries = {rel: [f"About {rel}, line {i}.\n" for i in range(5)] for rel in self.facts}
        self.count = 0

    def _fact(self, fid: str) -> dict[str, Any]:
        return {"id": fid, "fact": f"Fact {fid}", "status": "active"}

    def units(self) -> Units:
        units: Units = {
            file_key("workspace/MEMORY.md"): (FILE, b"# Memory\n\n" + b"".join(self.memory)),
            file_key("workspace/USER.md"): (FILE, b"# User\n\n" + b"".join(self.user)),
        }
        for name, body in self.dailies.items():
            units[file_key(f"workspace/memory/{name}.md")] = (FILE, b"".join(body))
        for rel, facts in self.facts.items():
            units |= {fact_key(rel, fid): (FACT, dict(record)) for fid, record in facts.items()}
            units[entity_key(rel)] = (ENTITY, EntityContent({}, "".join(self.summaries[rel])))
        return units

    def agent_day(self) -> set[str]:
        """The agent's day; returns the unit keys the janitor changed (meant)."""
        rng, meant = self.rng, set()
        self.day += timedelta(days=1)
        today = self.day.isoformat()
        self.dailies[today] = [f"# {today}\n\n".encode()] + [b"- did a thing\n"] * rng.randint(2, 25)
        self.memory += [b"- a new lesson\n"] * rng.randint(0, 3)
        if rng.random() < 0.05:  # a tidy-up: a few stale lines go
            for _ in range(rng.randint(1, max(1, len(self.memory) // 5))):
                self.memory.pop(rng.randrange(len(self.memory)))
        if len(self.memory) > 150:  # the janitor moves expired sections to the archive
            self.memory = self.memory[len(self.memory) // 3 :]
            meant.add(file_key("workspace/MEMORY.md"))
        if rng.random() < 0.1:
            self.user.append(b"- a new preference\n")
        for name in [n for n in self.dailies if (self.day - date.fromisoformat(n)).days > 30]:
            del self.dailies[name]  # the janitor archives old daily notes
            meant.add(file_key(f"workspace/memory/{name}.md"))
        rels = list(self.facts)
        for _ in range(rng.randint(0, 5)):
            self.count += 1
            rel = rng.choice(rels)
            self.facts[rel][f"n{self.count}"] = self._fact(f"n{self.count}")
        for _ in range(rng.randint(0, 2)):
            record = rng.choice(list(self.facts[rng.choice(rels)].values()))
            record["status"] = "superseded"
        if rng.random() < 0.05:
            facts = self.facts[rng.choice(rels)]
            if len(facts) > 1:
                del facts[rng.choice(list(facts))]
        if rng.random() < 0.1:
            rel = f"areas/people/new{self.count}"
            self.facts[rel] = {f"{rel}-0": self._fact(f"new{self.count}-0")}
            self.summaries[rel] = ["A new person.\n"]
        if rng.random() < 0.15:  # the weekly review rewrites a summary, a line longer or shorter
            rel = rng.choice(rels)
            lines = self.summaries[rel]
            self.summaries[rel] = lines[:-1] if len(lines) > 3 and rng.random() < 0.5 else [*lines, "More.\n"]
        return meant


def person_day(year: Year, units: Units) -> Units:
    """The person's day in Obsidian, on the snapshot both sides share: an edit, now and then a deletion."""
    rng, day = year.rng, dict(units)
    facts = sorted(k for k in day if k.startswith("fact:"))
    if rng.random() < 0.3:
        key = rng.choice(facts)
        day[key] = (FACT, {**day[key][1], "fact": "Corrected by the person"})
    if rng.random() < 0.03:
        del day[rng.choice(facts)]
    dailies = sorted(k for k in day if k.startswith("file:workspace/memory/"))
    if rng.random() < 0.02 and dailies:
        del day[rng.choice(dailies)]
    return day


def year_days(days: int, seed: int) -> tuple[list[tuple[str, list[Held]]], Year]:
    year = Year(seed)
    for _ in range(5):
        year.agent_day()
    found = []
    for _ in range(days):
        before = year.units()
        meant = year.agent_day()
        agent = year.units()
        person = person_day(year, before)
        # The person's edits apply to units the agent left as they were; the others the vault holds as before.
        by_agent = {k for k in set(before) | set(agent) if before.get(k) != agent.get(k)}
        person = {k: v for k, v in person.items() if k not in by_agent} | {k: before[k] for k in by_agent & set(before)}
        found.append((year.day.isoformat(), held(before, agent, person, meant)))
    return found, year


# -- the cases that must be held ----------------------------------------------------------------------------------
def controls(year: Year) -> list[tuple[str, bool]]:
    base = year.units()
    memory = file_key("workspace/MEMORY.md")
    base[memory] = (FILE, b"# Memory\n\n" + b"- a lesson\n" * 70)
    rel = next(iter(year.facts))
    dailies = sorted(k for k in base if k.startswith("file:workspace/memory/"))[-5:]
    facts = [k for k in base if k.startswith(f"fact:{rel}#")]
    cut = {k: v for k, v in base.items() if k not in dailies[:4]}
    emptied = {k: v for k, v in base.items() if k not in facts}
    cases = {
        "MEMORY.md 70 -> 3 lines": (base | {memory: (FILE, b"# Memory\n- a\n- b\n")}, "agent"),
        "four of five daily notes deleted": (cut, "agent"),
        "an entity's facts emptied": (emptied, "agent"),
        "a summary cut to one line": (base | {entity_key(rel): (ENTITY, EntityContent({}, "One.\n"))}, "agent"),
        "a person deleting the daily notes": ({k: v for k, v in base.items() if k not in dailies}, "person"),
    }
    found = []
    for name, (after, who) in cases.items():
        result = held(base, after, base) if who == "agent" else held(base, base, after)
        found.append((name, bool(result)))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--seed", type=int, default=47)
    args = parser.parse_args(argv)
    normal: list[tuple[str, list[Held]]] = []
    if args.corpus.is_dir():
        count, found = corpus_days(args.corpus)
        false = [name for name, h in found if h]
        print(f"corpus: {count} real workspaces, {len(found)} normal days (agent and person): {len(false)} held")
        normal += found
    else:
        print(f"corpus: {args.corpus} not found; skipped")
    found, year = year_days(args.days, args.seed)
    false = [name for name, h in found if h]
    print(f"generated year: {len(found)} ordinary days: {len(false)} held")
    normal += found
    for name, h in normal:
        for one in h:
            print(f"  false hold on {name}: {one.line()}")
    rate = sum(1 for _, h in normal if h) / max(1, len(normal))
    print(f"false-hold rate: {rate:.2%} of {len(normal)} normal days")
    caught = controls(year)
    for name, ok in caught:
        print(f"  control {'held' if ok else 'MISSED'}: {name}")
    print(f"controls held: {sum(ok for _, ok in caught)} of {len(caught)}")
    return 0 if rate == 0 and all(ok for _, ok in caught) else 1


if __name__ == "__main__":
    sys.exit(main())
