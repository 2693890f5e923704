"""The full pass: scan both trees -> line up with the base -> decide -> plan -> guard -> commit the person's
edits -> apply -> commit the agent's side -> record the new base and, when the pass settled, the snapshot that
lets the next pass with nothing to do stop early (``snapshot.py``)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from vaultsync.config import Config
from vaultsync.core.changes import keyed_changes, message
from vaultsync.core.decide import UNKNOWN, Outcome, decide
from vaultsync.core.merge import merge_entities, merge_records, merge_text
from vaultsync.core.moves import apply_moves, detect_moves, moved_walk
from vaultsync.core.plan import Action, Plan, make_plan, scope_of
from vaultsync.core.scope import ITEMS, SCOPE_MAX, SUMMARY, Context, Names, Scope, crowded, narrow
from vaultsync.core.units import UnitState, World, gather, same
from vaultsync.engine.apply import Applied, apply_plan
from vaultsync.engine.run import PassOptions
from vaultsync.fs import atomic_write, set_aside
from vaultsync.git.repo import Author, GitFailed, NotARepository, VaultRepo
from vaultsync.git.secrets import scan_bytes
from vaultsync.keys import ENTITY, FACT, entity_key, facts_of, is_file, mem_path_of, note_of, rel_of
from vaultsync.memory.tree import MemoryScan, list_memory, scan_memory, scan_memory_scope
from vaultsync.model import Change, Problem, Report, Severity
from vaultsync.state import snapshot
from vaultsync.state.base import BaseEntry, BaseStore
from vaultsync.vault.layout import VaultLayout
from vaultsync.vault.scan import VaultScan, scan_vault, scan_vault_scope


def _merge_files(base: bytes | None, memory: bytes, vault: bytes) -> tuple[bytes, str]:
    try:
        texts = [None if base is None else base.decode(), memory.decode(), vault.decode()]
    except UnicodeDecodeError:
        return memory, "both sides changed a file that is not text"
    merged, conflict = merge_text(*texts)  # type: ignore[arg-type]
    return merged.encode(), conflict


MERGERS = {FACT: merge_records, ENTITY: merge_entities}


def decide_all(world: World) -> None:
    for state in world.units.values():
        merger = MERGERS.get(state.kind, _merge_files)
        state.decision = decide(state.base, state.memory, state.vault, same(state.kind), merger)


@dataclass
class Tally:
    """What a pass would delete on each side, out of how many units it read there: counted batch by batch by a
    full pass over a large memory, at once by any other."""

    total: dict[str, int] = field(default_factory=lambda: {"memory": 0, "vault": 0})
    doomed: dict[str, list[str]] = field(default_factory=lambda: {"memory": [], "vault": []})

    def add(self, world: World) -> list[str]:
        """Count ``world``'s units; returns the keys it would delete, on either side."""
        deleted = []
        for side in ("memory", "vault"):
            for key, state in world.units.items():
                value = getattr(state, side)
                if value is None or value is UNKNOWN or state.decision is None:
                    continue
                self.total[side] += 1
                if _deleted(state):
                    self.doomed[side].append(key)
                    deleted.append(key)
        return deleted

    def guard(self, cfg: Config, unread: int = 0) -> str:
        """Why the pass must stop before writing anything, or "" when it may go on.

        Trigger: a pass would delete more than the configured share and count of one side's units. Why: a
        mis-mounted folder, a half-finished checkout or an agent bug looks exactly like "the person deleted
        everything". Then: stop with exit 4, name what would go, and let the person confirm with --yes.
        ``unread``: units a scoped pass did not read, there on both sides.
        """
        reasons = []
        for side, doomed in self.doomed.items():
            total = self.total[side] + unread
            if len(doomed) > cfg.safety.max_delete_count and len(doomed) > cfg.safety.max_delete_share * total:
                sample = ", ".join(sorted({scope_of(k) for k in doomed})[:5])
                what = f"{len(doomed)} of {total} units on the {side} side"
                reasons.append(f"the pass would delete {what} ({sample} ...)")
        return "; ".join(reasons)


def deletion_guard(world: World, cfg: Config, unread: int = 0) -> str:
    tally = Tally()
    tally.add(world)
    return tally.guard(cfg, unread)


def _deleted(state: UnitState) -> bool:
    return state.decision is not None and state.decision.result is None


def empty_side(empty: dict[str, bool], synced: bool) -> str:
    """Why a pass must stop when a side holds nothing (``empty``: per side) while the last sync had content."""
    if not synced:
        return ""
    for side, nothing in empty.items():
        if nothing:
            return f"the {side} side is empty while the last sync had content; is a folder unmounted?"
    return ""


def missing_places(cfg: Config, layout: VaultLayout, base: Iterable[str]) -> str:
    """Folders the last sync filled that are gone now, on either side.

    Trigger: a top folder of the vault (``2 Areas``, ``Daily``) or of the memory tree (``life/areas``,
    ``memory/``) that held synced units is missing. Why: a renamed folder in the config, an unmounted disk or a
    half-done move looks exactly like "everything in it was deleted". Then: stop before writing (exit 4).
    """
    vault_tops: set[str] = set()
    memory_dirs: set[Path] = set()
    paras: set[str] = set()  # every entity's and fact's places follow from its PARA folder: one look per folder
    for key in base:
        if is_file(key):
            vault_tops.add(layout.note_for_key(key).split("/", 1)[0])
            root, _, sub = mem_path_of(key).partition("/")
            top = sub.split("/", 1)[0] if "/" in sub else ""
            memory_dirs.add((cfg.workspace if root == "workspace" else cfg.life) / top)
        else:
            paras.add(rel_of(key).split("/", 1)[0])
    for para in paras:
        vault_tops.add(layout.para_folder(para).split("/", 1)[0])
        memory_dirs.add(cfg.life / para)
    gone = [f"vault folder '{t}'" for t in sorted(vault_tops) if t and not (cfg.vault / t).is_dir()]
    gone += [f"memory folder {d}" for d in sorted(memory_dirs) if not d.is_dir()]
    if not gone:
        return ""
    return f"{', '.join(gone)} held synced notes and is missing (renamed in the config, or not mounted?)"


def _committable(repo_root: Path, paths: set[str], report: Report, checked: Collection[str] = ()) -> set[str]:
    """Leave out of the commit any file holding a secret: git history is forever. ``checked`` paths need no
    second look: git's index holds them as the pass wrote them, and what it wrote held none (they are
    committed as the index holds them, see ``VaultRepo.commit``)."""
    keep = paths.intersection(checked)
    for path in sorted(paths.difference(checked)):
        target = repo_root / path
        findings = scan_bytes(target.read_bytes()) if target.is_file() else []
        if findings:
            where = ", ".join(f"line {f.line}: {f.kind} {f.redacted}" for f in findings[:3])
            report.problems.append(
                Problem(path, f"holds a secret ({where}); synced locally but left out of git", Severity.WARNING)
            )
        else:
            keep.add(path)
    return keep


def _outcome(state: UnitState) -> Outcome | None:
    return state.decision.outcome if state.decision else None


def _commit(
    repo: VaultRepo,
    root: Path,
    paths: set[str],
    text: str,
    author: Author,
    report: Report,
    checked: Collection[str] = (),
) -> bool:
    """Commit ``paths`` as ``author``; False (with the reason reported) when git refused."""
    if not paths:
        return True
    try:
        sha = repo.commit(_committable(root, paths, report, checked), text, author, staged=checked)
    except GitFailed as exc:
        report.problems.append(Problem(str(root), _why(exc.stderr)))
        return False
    if sha:
        report.commits.append(sha)
    return True


UNCOMMITTED = "uncommitted.json"  # vault notes written by a pass whose agent commit has not happened yet


def _uncommitted(cfg: Config) -> set[str]:
    try:
        listed = json.loads((cfg.state_dir / UNCOMMITTED).read_bytes())
    except (OSError, ValueError):
        return set()
    return {p for p in listed if isinstance(p, str)} if isinstance(listed, list) else set()


def _why(stderr: str) -> str:
    """git's reason in one line; a held lock is named, with what the person can do about it."""
    lock = re.search(r"'([^']*index\.lock)'", stderr)
    if lock:
        return (
            f"git commit failed: {lock.group(1)} exists (another git is running, or one was killed and left it); "
            "vaultsync does not delete it: when no git is running, delete that file and sync again"
        )
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return f"git commit failed: {lines[-1] if lines else 'no reason given'}"


@dataclass(frozen=True)
class Setting:
    """What every way of running a pass shares: the config and options, the layout, the base, the day, and the
    memory walk the quick check made."""

    cfg: Config
    options: PassOptions
    layout: VaultLayout
    store: BaseStore
    today: date
    walk: snapshot.MemoryWalk


def run_full(
    cfg: Config, options: PassOptions, report: Report, walk: snapshot.MemoryWalk, seen: snapshot.Seen | None = None
) -> Report:
    """One pass over every unit, or over those ``seen`` (the quick check's findings) touches when that is safe."""
    layout = VaultLayout(cfg.layout)
    store = BaseStore(cfg.state_dir / "base.sqlite", read_only=options.dry_run)
    setting = Setting(cfg, options, layout, store, options.today or date.today(), walk)
    try:
        narrowed = _narrow(cfg, layout, store, seen) if seen is not None else None
        if narrowed is not None:
            scoped = Report(dry_run=report.dry_run, scoped=True)  # a widened attempt leaves no trace
            if _run(setting, scoped, narrowed) is not None:
                return scoped
            reach = narrowed.context.reach
            wider = len(narrowed.scope.rels | reach) + len(narrowed.scope.files)
            if reach and seen is not None and wider <= SCOPE_MAX:
                # An entity created, renamed or deleted is named by these unread ones: read them too, once.
                narrowed = _narrow(cfg, layout, store, seen, reach, narrowed)
                scoped = Report(dry_run=report.dry_run, scoped=True)
                if narrowed is not None and _run(setting, scoped, narrowed) is not None:
                    return scoped
        from vaultsync.engine.batched import run_batched

        result = _import(setting, report) or run_batched(setting, report) or _run(setting, report, None)
        assert result is not None
        return result
    finally:
        store.close()


@dataclass
class BaseKeys:
    """What a scoped pass needs of the base besides its own units, shared by its attempts: the memory paths of
    its file units, how many units it holds, and what ``missing_places`` finds for all of them (400k keys at
    200k facts), looked up at most once."""

    store: BaseStore
    files: frozenset[str]
    units: int
    missing: str | None = None

    def missing_places(self, cfg: Config, layout: VaultLayout) -> str:
        if self.missing is None:
            self.missing = missing_places(cfg, layout, self.store.keys())
        return self.missing


@dataclass(frozen=True)
class Narrowed:
    seen: snapshot.Seen
    scope: Scope
    context: Context
    unread: int  # base units out of scope
    base: BaseKeys


def _narrow(
    cfg: Config,
    layout: VaultLayout,
    store: BaseStore,
    seen: snapshot.Seen,
    more: Iterable[str] = (),
    first: Narrowed | None = None,
) -> Narrowed | None:
    """The scoped pass for what ``seen`` lists, with the entities ``more`` read as well; None: run in full.
    ``first``: the attempt before this one, whose base keys, entity names and entities naming the created,
    renamed or deleted ones (see ``Context``) still hold."""
    entities = snapshot.entities(cfg, seen) if first is None else first.context.names
    if entities is None:
        return None
    if not store.stems():
        return None  # a read-only look (--dry-run) at a base from an older version
    base = first.base if first else BaseKeys(store, store.files(), store.count())
    scope = narrow(seen, layout, base.files, entities)
    if scope is None or crowded(scope.created, cfg.life, cfg.vault, layout):
        return None
    scope = replace(scope, rels=scope.rels | set(more))
    context = Context(scope, layout, store, entities, base.files, first.context.naming if first else None)
    return Narrowed(seen, scope, context, base.units - len(context.keys), base)


def _standing_unread(cfg: Config, layout: VaultLayout, narrowed: Narrowed) -> list[Problem]:
    """The standing problems of the files a scoped pass does not read: they hold what they held when the last
    settled pass found them. Those of the files it reads, it finds again or not."""
    scope = narrowed.scope
    read_note = scope.reads(layout)
    read = {str(cfg.life / rel / name) for rel in scope.rels for name in (ITEMS, SUMMARY)}
    for mem_path in scope.files:
        root, _, rest = mem_path.partition("/")
        read.add(str((cfg.workspace if root == "workspace" else cfg.life) / rest))
    return [p for p in narrowed.seen.problems if p.path not in read and not read_note(p.path)]


def _repo(cfg: Config, report: Report) -> VaultRepo | None:
    """The vault's repository when a pass may write to it; None (with the reason in the report) when not."""
    try:
        repo = VaultRepo(cfg.vault)
    except NotARepository:
        report.stopped = f"{cfg.vault} is not a git repository; run `vaultsync init` or `git init` there"
        return None
    busy = repo.busy()
    if busy:
        report.stopped = busy + "; nothing was written"
        return None
    return repo


def _import(setting: Setting, report: Report) -> Report | None:
    """A first import into an empty vault, run batch by batch (``firstimport.py``); None when this is none."""
    cfg, options, layout, store = setting.cfg, setting.options, setting.layout, setting.store
    if options.dry_run or options.import_batch <= 0 or not store.empty() or _uncommitted(cfg):
        return None
    vault = scan_vault(cfg.vault, layout)
    if vault.entities or vault.files or vault.conflict_copies or vault.foreign or vault.problems or vault.leftovers:
        return None
    repo = _repo(cfg, report)
    if repo is None:
        return report
    from vaultsync.engine.first_import import run_import

    listing = list_memory(cfg.workspace, cfg.life, layout.reserved_life_dirs())
    return run_import(setting, report, repo, listing)


MOVES = "\uffff"  # sorts after every unit key


def changed(
    world: World,
    layout: VaultLayout,
    vault: VaultScan,
    base: Mapping[str, object],
    moves: list[tuple[str, str]],
    renamed: dict[str, str],
) -> tuple[list[tuple[str, Change]], set[str]]:
    """The changes each side made since the base (with their units' keys, see ``keyed_changes``; a move comes
    after every unit's change), and the vault paths that go in the person's commit: the notes they changed, the
    old and new places of the folders they moved, and the note of an entity folder they deleted even when the
    entity had no summary (no unit changed, so nothing else names the note)."""
    changes, person_paths = keyed_changes(world, layout)
    for old, new in moves:
        changes.append((MOVES, Change("vault", scope_of(entity_key(new)), f"moved from {old}")))
        moved = vault.entities[new]
        person_paths |= {n.path for n in moved.facts.values()} | ({moved.note.path} if moved.note else set())
        person_paths.add(layout.entity_note(old))
        person_paths |= {layout.fact_note(old, note_of(k)) for k in renamed.values() if k.startswith(facts_of(old))}
    synced_entities = {rel_of(k) for k in base if not is_file(k)}
    person_paths |= {
        layout.entity_note(rel) for rel in synced_entities if getattr(vault.entities.get(rel), "note", None) is None
    }
    return changes, person_paths


def plan_moves(
    plan: Plan, moves: list[tuple[str, str]], renamed: dict[str, str], base: dict[str, BaseEntry], life: Path
) -> None:
    """Carry the person's folder moves over to life/ first, and re-key their units in the base."""
    for old, new in moves:
        keys = tuple(k for k in renamed if k.startswith(facts_of(new)) or k == entity_key(new))
        plan.actions.insert(
            0, Action("memory", "move", life / old, f"life/{old} -> life/{new}", keys=keys, dest=life / new)
        )
    for new_key, old_key in renamed.items():
        plan.deletes.append(old_key)
        if new_key not in plan.upserts and new_key not in plan.deletes:
            plan.upserts[new_key] = base[new_key]


def settle_conflicts(
    cfg: Config, layout: VaultLayout, known: dict[str, tuple[str, str]], moves: list[tuple[str, str]]
) -> tuple[list[str], dict[str, tuple[str, str, str]], list[str]]:
    """The conflict copies gone from where the store knows them, those of them carried along by a folder move
    (new path -> key, detail, old path), and those the person resolved by deleting them.

    A copy is resolved when the person deletes it; one that moved with its entity folder is open still.
    """
    gone = sorted(p for p in known if not (cfg.vault / p).exists())
    carried: dict[str, tuple[str, str, str]] = {}
    for old, new in moves:
        old_dir, new_dir = layout.entity_dir(old), layout.entity_dir(new)
        for path in gone:
            moved_to = new_dir + path[len(old_dir) :]
            if path.startswith(old_dir + "/") and (cfg.vault / moved_to).exists():
                key, detail = known[path]
                carried[moved_to] = (key.replace(old, new, 1), detail, path)
    resolved = [p for p in gone if not any(p.startswith(layout.entity_dir(old) + "/") for old, _ in moves)]
    return gone, carried, resolved


def _run(setting: Setting, report: Report, narrowed: Narrowed | None) -> Report | None:
    """The pass; None when a scoped one finds, before writing anything, that it must run in full."""
    cfg, options, layout, store = setting.cfg, setting.options, setting.layout, setting.store
    today, walk = setting.today, setting.walk
    if narrowed is not None:
        scope = narrowed.scope
        base = store.load(narrowed.context.keys)
        mem = scan_memory_scope(cfg.workspace, cfg.life, scope.rels, scope.files)
        vault = scan_vault_scope(cfg.vault, layout, scope.rels, scope.files)
    else:
        base = store.load()
        mem = scan_memory(cfg.workspace, cfg.life, layout.reserved_life_dirs())
        vault = scan_vault(cfg.vault, layout)
    scanned = mem.problems + vault.problems
    if narrowed is not None:
        scanned += _standing_unread(cfg, layout, narrowed)
    report.problems += sorted(scanned, key=lambda p: p.path)  # by file, whichever files this pass read
    moves = detect_moves(mem, vault, base)
    renamed = apply_moves(moves, mem, base, cfg.life)
    earlier = _uncommitted(cfg)
    world = gather(mem, vault, base, layout, store.ids(narrowed.scope.rels if narrowed else None), today, earlier)
    report.problems += world.problems
    decide_all(world)

    if narrowed is not None:
        known = narrowed.context.names
        gone = {r for r in narrowed.scope.rels if r in known and (r not in mem.entities or r not in vault.entities)}
        if gone and len(gone) == len(known):
            return None  # every entity gone from a side: an unmounted folder? the full pass's checks say
        if not options.confirm_deletes:
            # A missing top folder shows as its entities or files gone; only then are the folders checked (it
            # takes every key of the base).
            emptied = gone or any(is_file(k) and _deleted(u) for k, u in world.units.items())
            missing = narrowed.base.missing_places(cfg, layout) if emptied else ""
            report.stopped = missing or deletion_guard(world, cfg, narrowed.unread)
    elif not options.confirm_deletes:
        empty = {"memory": not mem.entities and not mem.files, "vault": not vault.entities and not vault.files}
        missing = empty_side(empty, bool(base)) or missing_places(cfg, layout, base)
        report.stopped = missing or deletion_guard(world, cfg)
    if report.stopped:
        report.stopped += "; nothing was written (run again with --yes to confirm)"
        return report

    stamp = options.now().strftime("%Y%m%d-%H%M%S")
    plan = make_plan(cfg, layout, world, mem, vault, base, stamp, narrowed.context if narrowed else None)
    if plan.widen:
        return None
    keyed, person_paths = changed(world, layout, vault, base, moves, renamed)
    changes = [change for _, change in keyed]
    plan_moves(plan, moves, renamed, base, cfg.life)
    report.changes += changes
    report.problems += plan.problems
    report.conflicts = plan.conflicts
    report.actions = [a.describe() for a in plan.actions]
    # Notes (a file vaultsync leaves alone, a folder it does not follow) are said once, not every hour.
    report.problems += [Problem(p, "not a vaultsync note; left alone", Severity.NOTE) for p in sorted(world.foreign)]
    reported = store.reported()
    fresh_notes = sorted({p.path for p in report.problems if p.severity is Severity.NOTE} - reported)
    report.problems = [p for p in report.problems if p.severity is not Severity.NOTE or p.path in fresh_notes]
    report.open_conflicts = sorted(vault.conflict_copies)
    if narrowed is not None:  # the copies it did not read are as the last settled pass left them
        unread = [p for p in narrowed.seen.conflicts if (cfg.vault / p).exists()]
        report.open_conflicts = sorted(set(report.open_conflicts) | set(unread))
    gone, carried, resolved = settle_conflicts(cfg, layout, store.conflicts(), moves)
    person_paths |= {p for path in carried for p in (path, carried[path][2])}
    if options.dry_run:
        return report

    repo = _repo(cfg, report)
    if repo is None:
        return report
    person = repo.person(cfg.git.person_name, cfg.git.person_email)
    person_changes = [c for c in changes if c.side == "vault"]
    person_changes += [Change("vault", scope_of(store.conflicts()[p][0]), "conflict resolved") for p in resolved]
    person_paths |= set(resolved)
    if not _commit(repo, cfg.vault, person_paths, message("vault -> memory", person_changes), person, report):
        report.stopped = "could not commit the person's edits; nothing was written"
        return report

    # Notes written but not yet committed (this pass's, or a killed or refused earlier pass's) are listed first,
    # so whichever pass next commits for the agent takes them all.
    snapshot.forget(cfg)  # from here on files change; only a settled pass records a new one
    set_aside(mem.leftovers + vault.leftovers, (cfg.vault, cfg.workspace, cfg.life), cfg.state_dir / "trash" / stamp)
    planned = {a.shown for a in plan.actions if a.side == "vault"}
    if planned - earlier:
        atomic_write(cfg.state_dir / UNCOMMITTED, json.dumps(sorted(planned | earlier)).encode())
    applied = apply_plan(plan, cfg.state_dir / "trash" / stamp, options.progress)
    report.problems += applied.problems
    report.files_written = sum(1 for a in applied.done if a.op == "write")
    leaving = _leaving(cfg, layout, vault, world.foreign, applied, narrowed, plan.names)
    try:
        # Units both sides already agree on but the base does not know (a pass killed after writing, before
        # committing) are committed now, so nothing stays uncommitted.
        converged = {
            layout.note_for_key(k)
            for k, u in world.units.items()
            if u.decision and u.decision.outcome is Outcome.CONVERGED
        }
        vault_paths = {a.shown for a in applied.done if a.side == "vault"} | converged | earlier
        agent_changes = [c for c in changes if c.side == "memory"]
        touched = sorted({scope_of(k) for a in applied.done if a.side == "vault" for k in a.keys})
        agent = Author(cfg.git.agent_name, cfg.git.agent_email)
        text = message("memory -> vault", agent_changes, touched)
        if not _commit(repo, cfg.vault, vault_paths, text, agent, report):
            # Not recording the base keeps these units "converged but unknown", and the list of uncommitted
            # notes stays: the next pass commits them.
            return report
        (cfg.state_dir / UNCOMMITTED).unlink(missing_ok=True)

        failed = applied.failed_keys | {old for new, old in renamed.items() if new in applied.failed_keys}
        store.save(
            {k: v for k, v in plan.upserts.items() if k not in failed},
            [k for k in plan.deletes if k not in failed],
            ids=world.ids(),
            conflicts={c.copy_path: (c.key, c.detail) for c in plan.conflicts} | {p: c[:2] for p, c in carried.items()},
            resolved=gone,
            reported=fresh_notes,
        )
        report.open_conflicts = sorted(set(report.open_conflicts) | {c.copy_path for c in plan.conflicts})
        if not applied.failed_keys and _settled(report):
            standing = [p for p in report.problems if p.standing]
            _record(cfg, moved_walk(walk, moves), mem, applied, report.open_conflicts, plan.names, standing, leaving)
        return report
    finally:
        leaving.wait()


def _settled(report: Report) -> bool:
    """Nothing left for a later pass: no stop, and no error or warning but those about a file's own content,
    which stand until the file changes (the snapshot keeps them, to say again)."""
    return not report.stopped and all(p.severity is Severity.NOTE or p.standing for p in report.problems)


@dataclass
class Leaving:
    """The vault as a pass leaves it, for the snapshot a settled pass records: each note's bytes, the notes in
    synced places it leaves alone, and, for a scoped pass, what it keeps of the snapshot it started from and the
    snapshot index being brought up to it while the pass commits."""

    notes: dict[str, bytes]
    left_alone: list[str]
    patch: snapshot.IndexPatch | None = None
    _blobs: dict[str, str] | None = field(default=None, init=False, repr=False)

    def blobs(self) -> dict[str, str]:
        if self._blobs is None:
            self._blobs = {path: snapshot.blob_id(data) for path, data in self.notes.items()}
        return self._blobs

    def wait(self) -> None:
        if self.patch is not None:
            self.patch.suspects()


def _leaving(
    cfg: Config,
    layout: VaultLayout,
    vault: VaultScan,
    foreign: Iterable[str],
    applied: Applied,
    narrowed: Narrowed | None,
    names: dict[str, Names],
) -> Leaving:
    notes = {n.path: n.raw for n in vault.files.values()}
    for entity in vault.entities.values():
        notes |= {n.path: n.raw for n in entity.facts.values()}
        if entity.note:
            notes[entity.note.path] = entity.note.raw
    for action in applied.done:
        if action.side == "vault" and action.op == "write":
            notes[action.shown] = action.data
        elif action.side == "vault":
            notes.pop(action.shown, None)
    leaving = Leaving(notes, [*vault.conflict_copies, *vault.foreign, *foreign])
    if narrowed is not None and not applied.failed_keys:
        renamed = names != narrowed.context.names
        carry = snapshot.Carry(narrowed.seen, narrowed.scope.reads(layout), narrowed.context.inside, renamed)
        # changed copies elsewhere (a resolved one is gone): as they are now
        leaving.left_alone += [p for p in carry.seen.vault if not carry.read(p) and (cfg.vault / p).exists()]
        leaving.patch = snapshot.IndexPatch(cfg, carry, leaving.blobs(), leaving.left_alone)
    return leaving


def _record(
    cfg: Config,
    walk: snapshot.MemoryWalk,
    mem: MemoryScan,
    applied: Applied,
    open_: list[str],
    names: dict[str, Names],
    standing: list[Problem],
    leaving: Leaving,
) -> None:
    read = {f.mem_path: f.raw for f in mem.files.values()}
    for entity in mem.entities.values():
        if entity.items_raw is not None:
            read[f"life/{entity.rel}/items.json"] = entity.items_raw
        if entity.summary is not None:
            read[f"life/{entity.rel}/summary.md"] = entity.summary.raw
    written = {a.shown: a.data if a.op == "write" else None for a in applied.done if a.side == "memory"}
    entities = {rel: [name, list(aliases)] for rel, (name, aliases) in names.items()}
    blobs, left_alone, patch = leaving.blobs(), leaving.left_alone, leaving.patch
    snapshot.record(cfg, walk, written, read, blobs, left_alone, open_, entities, standing, patch)
