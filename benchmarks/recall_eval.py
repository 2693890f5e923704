"""A deterministic evaluation set for recall: months of chat-log daily notes between three people, the facts an
agent would extract from them, and questions whose evidence lines are known.

The shape follows conversational memory as agents keep it: one daily note per conversation, a heading per
session, one bullet per turn opened by the speaker's label (``- **Sam**: ...``), and a person entity per speaker
whose ``items.json`` holds dated facts. Topics recur across people and months on purpose, so that the words of a
question alone cannot tell Sam's pottery class from Priya's, nor March's book from April's. Each question has a
kind, and its evidence is one or more daily-note lines (a matching fact counts as the same evidence):

- ``when``: when did a named person do something another person also did;
- ``who``: who did something, no name in the question;
- ``period``: what a named person did in a month, a year or relative to today ("last week");
- ``multi-hop``: two events of one person, both needed;
- ``entity-less``: a topic question with no name and no date;
- ``neighbour``: the answer is a turn after the one that raised the topic and shares few of its words.

Usage: ``python benchmarks/recall_eval.py OUT`` writes ``OUT/workspace``, ``OUT/life`` and
``OUT/questions.json``; ``benchmarks/recall.py --eval-only`` builds and scores it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from pathlib import Path

START = date(2026, 1, 5)
DAYS = 150
TODAY = START + timedelta(days=DAYS + 2)  # what "last week" in a question counts from
PEOPLE = ("Nora", "Sam", "Priya")
SEED = 11

# One-off events: (the turn that raises it, the other's question, the answer, a question the answer settles,
# the values of ``{x}``). The same value is used by more than one person.
EVENTS = [
    (
        "I finally signed up for the {x} at the community centre.",
        "Nice! What day does it meet?",
        "{day} evenings, and the teacher is called {teacher}.",
        "What day does {w}'s {x} meet?",
        ("pottery class", "salsa class", "life drawing course", "choir"),
    ),
    (
        "We adopted a {x} from the shelter on Linden Road.",
        "Aw, what did you name it?",
        "We went with {pet}, after my grandmother's favourite film.",
        "What did {w} name the {x}?",
        ("rescue greyhound", "tabby kitten", "grey rabbit", "beagle puppy"),
    ),
    (
        "I ran the {x} this morning, my legs are done.",
        "Congrats! How long did it take you?",
        "Just under {minutes} minutes, a personal best.",
        "How long did the {x} take {w}?",
        ("harbour 10k", "city half marathon", "park 5k", "hill relay"),
    ),
    (
        "I got the {x} at work approved at last.",
        "Finally! Who is leading it?",
        "{teacher} from the Oslo office, with me as deputy.",
        "Who is leading {w}'s {x}?",
        ("warehouse migration", "billing rewrite", "mobile app redesign", "data retention project"),
    ),
    (
        "I booked flights for a trip to {x} in the summer.",
        "Jealous. Where are you staying?",
        "A small guesthouse near the {place}, recommended by {teacher}.",
        "Where is {w} staying in {x}?",
        ("Lisbon", "Kyoto", "Reykjavik", "Montreal"),
    ),
    (
        "I noticed our {x} started leaking again last night.",
        "Ugh, did you call someone?",
        "A plumber named {teacher} comes on {day}, it should cost about {minutes}0 euros.",
        "Did {w} call someone about the {x}?",
        ("kitchen sink", "bathroom ceiling", "washing machine", "radiator"),
    ),
    (
        "I started volunteering at the {x} on weekends.",
        "That's lovely, what do you do there?",
        "Mostly sorting donations and helping at the front desk with {teacher}.",
        "What does {w} do at the {x}?",
        ("food bank", "animal shelter", "youth library", "repair cafe"),
    ),
    (
        "I bought a secondhand {x} from a neighbour.",
        "How much did you pay for it?",
        "Only {minutes}0 euros, it needed a new chain and a wash.",
        "How much did {w} pay for the {x}?",
        ("road bike", "cargo bike", "electric scooter", "rowing machine"),
    ),
    (
        "I heard my sister is getting married in {x}.",
        "Oh wow, are you giving a speech?",
        "Yes, and I am terrified, I have written three drafts on {day} nights.",
        "Is {w} giving a speech at the wedding in {x}?",
        ("Porto", "Edinburgh", "the countryside", "Vienna"),
    ),
    (
        "I got a certificate in {x} after the online course.",
        "Well done! Was the exam hard?",
        "The final project took {minutes} hours, mostly on the {place} dataset.",
        "Was the {x} exam hard for {w}?",
        ("data analysis", "project management", "UX research", "cloud security"),
    ),
    (
        "I went to a {x} concert at the old theatre.",
        "Was it good? Who played?",
        "A trio from {place}, the cellist was incredible.",
        "Who played at the {x} concert {w} went to?",
        ("jazz", "folk", "string quartet", "piano"),
    ),
    (
        "We planted {x} in the allotment garden.",
        "Nice, when will they be ready?",
        "Hopefully by the end of {month}, if the slugs leave them alone.",
        "When will {w}'s {x} be ready?",
        ("tomatoes", "runner beans", "strawberries", "courgettes"),
    ),
]
# Things a person does again and again: each occurrence names another thing, asked about by period.
HABITS = [
    (
        "I just finished reading {x}.",
        ("Piranesi", "The Overstory", "Klara and the Sun", "Middlemarch", "Dune", "Circe"),
    ),
    (
        "I cooked {x} for dinner guests on Saturday.",
        (
            "a mushroom risotto",
            "lamb tagine",
            "a Thai green curry",
            "homemade ramen",
            "a fish pie",
            "vegetable lasagne",
        ),
    ),
    (
        "I watched {x} at the cinema.",
        ("Past Lives", "Oppenheimer", "Perfect Days", "Anatomy of a Fall", "The Zone of Interest", "Poor Things"),
    ),
]
FILL = {
    "day": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
    "teacher": ("Ines", "Marek", "Tomas", "Leila", "Oskar", "Yuki", "Greta", "Ravi"),
    "pet": ("Biscuit", "Pixel", "Juniper", "Mochi", "Clementine", "Waffles"),
    "minutes": ("42", "58", "95", "27", "113", "71"),
    "place": ("river", "old harbour", "botanical garden", "cathedral", "Bergen", "Glasgow"),
    "month": ("June", "July", "August"),
}
FOLLOW_UP = (
    "Still good, thanks for asking.",
    "Honestly a bit of a mess, but getting there.",
    "Great, I'll tell you more on Friday.",
)
SMALL_TALK = (
    ("How was your week?", "Busy, work has been a lot lately."),
    ("Did you sleep at all?", "Barely, the neighbours had a party again."),
    ("Are we still on for coffee?", "Yes, same place as always."),
    ("How is your mum doing?", "Better, thanks for asking."),
    ("Did you see the weather forecast?", "Rain all weekend, as usual."),
    ("I need a holiday.", "Same here, honestly."),
)


@dataclass
class Question:
    kind: str
    text: str
    evidence: list[list[str]] = field(default_factory=list)  # per hop: "memory/<day>.md:<line>" or a fact id


@dataclass
class Turn:
    speaker: str
    text: str
    ref: list[str] = field(default_factory=list)  # filled with "memory/<day>.md:<line>" when written


@dataclass
class Event:
    who: str
    day: date
    turns: list[Turn]
    value: str
    fact: str
    fact_id: str = ""


def _fill(rng: random.Random, text: str, x: str) -> str:
    return text.format(x=x, **{k: rng.choice(v) for k, v in FILL.items()})


def _other(rng: random.Random, who: str) -> str:
    return rng.choice([p for p in PEOPLE if p != who])


def _events(rng: random.Random) -> tuple[list[Event], list[tuple[int, Event]]]:
    """Every one-off event twice or three times, by different people on different days; habits monthly."""
    events: list[Event] = []
    topics: list[tuple[int, Event]] = []
    for n, (raise_, ask, answer, _, values) in enumerate(EVENTS):
        for who in rng.sample(PEOPLE, rng.choice((2, 3))):
            x = rng.choice(values[:2])
            other = _other(rng, who)
            turns = [Turn(who, _fill(rng, raise_, x)), Turn(other, ask), Turn(who, _fill(rng, answer, x))]
            day = START + timedelta(days=rng.randrange(DAYS))
            event = Event(who, day, turns, x, f"{who} {_fill(rng, raise_, x)}")
            events.append(event)
            topics.append((n, event))
            # Weeks later someone asks how it went: the topic's words again, in another person's mouth.
            later = day + timedelta(days=rng.randrange(7, 40))
            if later < TODAY:
                follow = [Turn(other, f"How is the {x} going, by the way?"), Turn(who, rng.choice(FOLLOW_UP))]
                events.append(Event(who, later, follow, x, ""))
    for template, values in HABITS:
        for who in PEOPLE:
            for month, x in enumerate(rng.sample(values, 5)):
                day = START + timedelta(days=month * 30 + rng.randrange(28))
                if day >= TODAY:
                    continue
                text = template.format(x=x)
                events.append(Event(who, day, [Turn(who, text)], x, f"{who}: {text}"))
    return events, topics


def _write_notes(out: Path, rng: random.Random, events: list[Event]) -> None:
    by_day: dict[date, list[Event]] = {}
    for event in events:
        by_day.setdefault(event.day, []).append(event)
    for day in sorted(by_day):
        lines = [f"# {day.isoformat()}", ""]
        for session, event in enumerate(by_day[day], 1):
            other = next((t.speaker for t in event.turns if t.speaker != event.who), _other(rng, event.who))
            lines += [f"## Session {session}: {event.who} and {other}", ""]
            ask, reply = rng.choice(SMALL_TALK)
            lines += [f"- **{other}**: {ask}", f"- **{event.who}**: {reply}"]
            for turn in event.turns:
                lines.append(f"- **{turn.speaker}**: {turn.text}")
                turn.ref.append(f"memory/{day.isoformat()}.md:{len(lines)}")
            ask, reply = rng.choice(SMALL_TALK)
            lines += [f"- **{event.who}**: {ask}", f"- **{other}**: {reply}", ""]
        path = out / "workspace/memory" / f"{day.isoformat()}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")


def _write_facts(out: Path, events: list[Event]) -> None:
    for person in PEOPLE:
        slug = person.lower()
        mine = sorted((e for e in events if e.who == person and e.fact), key=lambda e: e.day)
        facts = []
        for n, event in enumerate(mine, 1):
            event.fact_id = f"{slug}-{n:03d}"
            facts.append(
                {
                    "id": event.fact_id,
                    "fact": event.fact,
                    "category": "event",
                    "timestamp": event.day.isoformat(),
                    "source": f"memory/{event.day.isoformat()}.md",
                    "status": "active",
                }
            )
        folder = out / "life/areas/people" / slug
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "items.json").write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
        (folder / "summary.md").write_text(f"# {person}\n\nA friend; we talk every week or two.\n", encoding="utf-8")


def _month_name(day: date) -> str:
    return f"{day:%B} {day.year}"


def _who_question(text: str) -> str:
    """ "I ran the park 5k this morning, ..." -> "Who ran the park 5k, ...?" """
    rest = text.rstrip(".").split(" ", 1)[1]
    for mine, theirs in ((" my ", " their "), (" our ", " their "), (" this morning", "")):
        rest = rest.replace(mine, theirs)
    return f"Who {rest}?"


def _questions(rng: random.Random, events: list[Event], topics: list[tuple[int, Event]]) -> list[Question]:
    out: list[Question] = []
    by_topic: dict[int, list[Event]] = {}
    for n, event in topics:
        by_topic.setdefault(n, []).append(event)
    for n, event in topics:
        raise_, answer = event.turns[0], event.turns[2]
        hop = [raise_.ref[0], event.fact_id]
        same = [e for e in by_topic[n] if e.turns[0].text == raise_.text]
        out.append(Question("when", f"When did {event.who} mention the {event.value}?", [hop]))
        if same[0] is event:
            out.append(
                Question("who", _who_question(raise_.text), [[r for e in same for r in (e.turns[0].ref[0], e.fact_id)]])
            )
        out.append(Question("neighbour", EVENTS[n][3].format(w=event.who, x=event.value), [[answer.ref[0]]]))
        if len(same) == 1:
            out.append(Question("entity-less", f"What happened with the {event.value}?", [hop]))
        mine = [e for e in events if e.who == event.who and e is not event and len(e.turns) == 3]  # one-offs
        if len(by_topic[n]) > 1 and mine:
            second = rng.choice(mine)
            out.append(
                Question(
                    "multi-hop",
                    f"Which came first for {event.who}: the {event.value} or the {second.value}?",
                    [hop, [second.turns[0].ref[0], second.fact_id]],
                )
            )
    for event in events:
        if len(event.turns) != 1 or not event.fact:
            continue
        verb = next(w for w in ("finished", "cooked", "watched") if w in event.turns[0].text)
        ago = TODAY - event.day
        if timedelta(days=TODAY.weekday()) < ago <= timedelta(days=TODAY.weekday() + 7):
            when = "last week"
        elif rng.random() < 0.7:
            when = f"in {_month_name(event.day)}"
        else:
            when = f"in {event.day:%B}"
        text = {
            "finished": "What book did {w} finish {p}?",
            "cooked": "What did {w} cook {p}?",
            "watched": "Which film did {w} watch {p}?",
        }[verb]
        out.append(Question("period", text.format(w=event.who, p=when), [[event.turns[0].ref[0], event.fact_id]]))
    return out


def build(out: Path, seed: int = SEED) -> list[Question]:
    rng = random.Random(seed)
    events, topics = _events(rng)
    _write_notes(out, rng, events)
    _write_facts(out, events)
    questions = _questions(rng, events, topics)
    (out / "questions.json").write_text(
        json.dumps({"today": TODAY.isoformat(), "questions": [asdict(q) for q in questions]}, indent=1),
        encoding="utf-8",
    )
    return questions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    questions = build(args.out, args.seed)
    kinds = sorted({q.kind for q in questions})
    print(json.dumps({k: sum(q.kind == k for q in questions) for k in kinds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
