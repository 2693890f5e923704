"""The full pass over a large memory, a batch of entities at a time, so that memory use follows the batch and
not the size of the memory (holding every unit at once took 2.1 GB at 200k facts).

A full pass runs when no settled pass left a snapshot to start from (after an upgrade, a config change, a
stopped pass) or when too much changed for a scoped one. Each entity's units are decided from its own base,
memory and vault; what rendering it needs of the others is their names and aliases (for mentions) and how many
notes share each name (for short links), as in a first import (``first_import.py``).

Both trees are listed first, without being read. The first walk reads, lines up and decides each batch, and
keeps only what the pass must know before it writes anything: every entity's names, every note's name, what
each side would delete (for the safety checks) and what the person changed (committed first, as by any pass),
with a fingerprint of each batch. The second walk reads each batch again, plans, writes and saves it. A batch
that reads differently the second time (a file changed meanwhile) ends the pass there: what was written is
committed, no snapshot is recorded, and the next pass, a full one, goes on from there.

Most full passes change no name (the first after an upgrade or a config change). The first walk therefore also
plans each batch against the names the last settled pass left; when the pass ends with those same names, a
batch whose plan writes nothing is not read a second time.

A folder the person moved in the vault shows as an entity gone from its old place and a new one at the new
place: every entity that is one or the other is read in the first batch, where the two are paired.

Here: the listing, the first walk and the safety checks. What a batch is, and what the first walk keeps of
it, are in ``batches.py``; the second walk, which writes, in ``second_walk.py``.
"""

from __future__ import annotations

from collections import Counter
from functools import partial

from vaultsync.config import Config
from vaultsync.core.changes import changed
from vaultsync.core.guard import empty_side
from vaultsync.core.planner import Planner, make_plan
from vaultsync.core.scope import Names, Planned
from vaultsync.core.shrink import daily_deletions, find_held
from vaultsync.engine.batches import FirstWalk, Read, Settled, cut_batches, note_blobs, read_batch
from vaultsync.engine.finish import keep_ids, touched_notes, unchanged_blobs
from vaultsync.engine.first_import import racy_reads
from vaultsync.engine.prepare import PassContext, missing_places
from vaultsync.engine.second_walk import write_batches
from vaultsync.keys import is_fact, is_file, mem_path_of, note_of
from vaultsync.memory.tree import list_memory
from vaultsync.model import Report
from vaultsync.names import fold
from vaultsync.state import snapshot
from vaultsync.state.files import StateFiles
from vaultsync.vault.layout import VaultLayout, slug_of
from vaultsync.vault.links import note_stem
from vaultsync.vault.scan import list_fact_notes, list_vault


def run_batched(setting: PassContext, report: Report) -> Report | None:
    """The full pass, batch by batch; None when the memory fits in one batch (the pass then reads it whole)."""
    cfg, options, layout, store = setting.cfg, setting.options, setting.layout, setting.store
    size = options.full_batch
    if size <= 0 or options.accept or options.restore:
        return None  # accepting or restoring: the whole pass, where the shrink guard sees every unit at once
    listing = list_memory(cfg.workspace, cfg.life, layout.reserved_life_dirs())
    listed = list_vault(cfg.vault, layout)
    keys = store.keys()
    batches = list(cut_batches(listing, listed, keys, size, partial(list_fact_notes, cfg.vault, layout)))
    if sum(len(b.rels) for b in batches) <= size:  # one batch: the pass reads it whole
        return None
    earlier = setting.files.uncommitted_notes()
    said = len(report.problems)  # what a whole pass, taking over, does not say again
    report.problems += sorted(listing.problems + listed.problems, key=lambda p: p.path)
    stamp = options.now().strftime("%Y%m%d-%H%M%S")
    guess = _guess(cfg, layout, keys)

    read = partial(read_batch, setting, earlier)
    known = FirstWalk()
    dailies: Counter[str] = Counter({"memory": 0, "vault": 0})  # daily notes deleted, over every batch
    touched = set() if options.dry_run else touched_notes(cfg)
    for batch in batches:
        scanned = read(batch)
        if _holds(setting, scanned, dailies):
            del report.problems[said:]
            return None  # a change to hold: the whole pass holds it and syncs the rest
        report.problems += (
            sorted(scanned.mem.problems + scanned.vault.problems, key=lambda p: p.path) + scanned.world.problems
        )
        planner = Planner(cfg, layout, scanned.world, scanned.mem, scanned.vault, scanned.base)
        planner.target()
        _, own, notes = planner.names_and_notes()
        known.names |= own
        known.counts.update(map(note_stem, notes))
        changes, paths = changed(scanned.world, layout, scanned.vault, scanned.base, scanned.moves, scanned.renamed)
        known.person_changes += [(k, c) for k, c in changes if c.side == "vault"]
        known.person_paths |= paths
        known.unchanged |= unchanged_blobs(scanned.world, touched)
        known.moves += scanned.moves
        known.marks.append(scanned.mark(own, notes, known.tally.add(scanned.world, options.deleting), paths))
        if guess is not None and not scanned.moves:
            _settle(setting, scanned, known, guess, stamp)
    if guess is None or (known.names, known.counts) != (guess.names, guess.counts):
        known.settled.clear()  # planned against other names than the pass ends with: all are read again

    if not options.confirm_deletes:
        empty = {"memory": not listing.rels and not listing.files, "vault": not listed.rels and not listed.files}
        missing = empty_side(empty, bool(keys)) or missing_places(cfg, layout, keys)
        report.stopped = missing
    if not report.stopped and known.tally.over(cfg.safety):
        del report.problems[said:]
        return None  # many deletions: the whole pass holds them (``core/shrink.py``)
    if report.stopped:
        report.stopped += "; nothing was written (run again with --yes to confirm)"
        return report
    del keys  # each batch holds its own
    return write_batches(setting, report, batches, known, listing, listed, read, stamp)


def _settle(setting: PassContext, scanned: Read, known: FirstWalk, guess: Planned, stamp: str) -> None:
    """A batch with nothing to do under the names the pass is guessed to end with is settled now, so the second
    walk does not read it again (``known.settled``, cleared when the guess turns out wrong)."""
    cfg, layout = setting.cfg, setting.layout
    plan = make_plan(cfg, layout, scanned.world, scanned.mem, scanned.vault, scanned.base, stamp, guess)
    if plan.actions or plan.upserts or plan.deletes:
        return
    reads = racy_reads(scanned.mem, setting.walk.racy)
    known.settled[len(known.marks) - 1] = Settled(note_blobs(scanned, []), reads, scanned.world.foreign, plan.problems)
    if not setting.options.dry_run:
        keep_ids(setting.store, scanned.world.ids())


def _holds(setting: PassContext, scanned: Read, dailies: Counter[str]) -> bool:
    """Whether the shrink guard holds a change of this batch, or the daily notes deleted over the batches so far
    (added to ``dailies``) cross their bound: only a whole pass sees every unit the guard weighs together."""
    cfg, options = setting.cfg, setting.options
    gone, _ = daily_deletions(scanned.world, options.deleting)
    dailies.update({side: len(keys) for side, keys in gone.items()})
    held = find_held(scanned.world, cfg.safety, setting.layout, options.deleting)
    return bool(held) or max(dailies.values()) > cfg.safety.max_daily_deletes


def _guess(cfg: Config, layout: VaultLayout, keys: list[str]) -> Planned | None:
    """Every entity's names and every note's name as the last settled pass left them (its snapshot's names and
    the base's units), to plan each batch against in the first walk; None when there are none to go by.

    Most full passes change no name (an upgrade, a config change): then every batch planned against them with
    nothing to write needs no second read.
    """
    saved = snapshot.saved_entities(StateFiles(cfg.state_dir))
    if saved is None:
        return None
    found = saved[1]
    names: dict[str, Names] = {}
    for rel, value in found.items():
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[1], list)):
            return None
        names[rel] = (str(value[0]), tuple(str(a) for a in value[1]))
    counts = Counter(fold(slug_of(rel)) for rel in names)
    for key in keys:
        if is_fact(key):
            counts[fold(note_of(key))] += 1
        elif is_file(key):
            path = layout.file_note(mem_path_of(key))
            if path:
                counts[note_stem(path)] += 1
    return Planned(names, counts)
