"""Where each memory unit lives in the vault, and back.

Unit keys are written in memory-side terms so both sides can name the same unit:
``entity:areas/people/sarah``, ``fact:areas/people/sarah#sarah-007`` and
``file:workspace/memory/2026-01-27.md``. This module is the only place that knows the vault's folder names.
"""

from __future__ import annotations

from dataclasses import dataclass

from vaultsync.config import Layout
from vaultsync.keys import entity_key, fact_key, file_key, is_entity, is_fact, mem_path_of, rel_of, split_fact_key
from vaultsync.model import PARA_KEYS, USERS_DIR, WORKSPACE_FILES
from vaultsync.names import day_note_date, name_problem, session_date

FACTS_DIR = "facts"
CONFLICT_MARK = ".vaultsync-conflict-"  # in the name of a conflict copy vaultsync keeps beside a note
IMPORTS = "imports"  # memory/imports/: memory OpenClaw copied from other agents (Claude Code, Codex, Hermes)


def user_file(rest: str) -> bool:
    """Whether the workspace path ``rest`` is a person's own USER.md, ``users/<id>/USER.md``."""
    parts = rest.split("/")
    return len(parts) == 3 and parts[0] == USERS_DIR and parts[2] == "USER.md" and name_problem(parts[1]) is None


def slug_of(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


def conflict_copy_name(note_path: str, stamp: str) -> str:
    stem = note_path.removesuffix(".md")
    return f"{stem}{CONFLICT_MARK}{stamp}.md"


@dataclass(frozen=True)
class VaultLayout:
    layout: Layout

    # -- memory -> vault -------------------------------------------------------------------------------
    def para_folder(self, para: str) -> str:
        return self.layout.para_folders()[para]

    def entity_dir(self, rel: str) -> str:
        para, _, rest = rel.partition("/")
        return f"{self.para_folder(para)}/{rest}"

    def entity_note(self, rel: str) -> str:
        return f"{self.entity_dir(rel)}/{slug_of(rel)}.md"

    def facts_dir(self, rel: str) -> str:
        return f"{self.entity_dir(rel)}/{FACTS_DIR}"

    def fact_note(self, rel: str, note: str) -> str:
        return f"{self.facts_dir(rel)}/{note}.md"

    def agent_dir(self) -> str:
        return f"{self.layout.resources}/{self.layout.agent}"

    def agent_archive_dir(self) -> str:
        return f"{self.layout.archives}/{self.layout.agent}"

    def file_note(self, mem_path: str) -> str | None:
        """Vault path of a memory file (``workspace/...`` or ``life/...``), None when it has no place."""
        root, _, rest = mem_path.partition("/")
        if root == "workspace":
            if rest in WORKSPACE_FILES or user_file(rest):
                return f"{self.agent_dir()}/{rest}"
            sub = rest.removeprefix("memory/")
            if sub == rest:
                return None
            if "/" not in sub and day_note_date(sub):
                return self.daily_note(sub)  # a session note beside its day's daily note
            if sub.startswith("archive/"):
                return f"{self.agent_archive_dir()}/{sub.removeprefix('archive/')}"
            if sub.startswith(f"{IMPORTS}/"):
                return f"{self.agent_dir()}/{sub}"
            return f"{self.agent_dir()}/memory/{sub}"
        if root == "life":
            para, _, under = rest.partition("/")
            if para in PARA_KEYS and under:
                return f"{self.para_folder(para)}/{under}"
            return f"{self.agent_dir()}/life/{rest}"
        return None

    def note_for_key(self, key: str) -> str:
        """The vault path of any unit key ("" for a memory file that has no place in the vault)."""
        if is_fact(key):
            return self.fact_note(*split_fact_key(key))
        if is_entity(key):
            return self.entity_note(rel_of(key))
        return self.file_note(mem_path_of(key)) or ""

    @property
    def daily_dir(self) -> str:
        """The daily notes' folder; "" for the top of the vault (Obsidian's default, which people write ".")."""
        folder = self.layout.daily.strip("/")
        return "" if folder in ("", ".") else folder

    def daily_note(self, name: str) -> str:
        """Where a new daily note goes: directly in the daily folder, as the config says."""
        return f"{self.daily_dir}/{name}" if self.daily_dir else name

    def in_daily(self, folder: str) -> bool:
        """Whether notes in vault folder ``folder`` are read as daily notes: the daily folder itself, or a date
        sub-folder of it (``Daily/2026/11``, as Obsidian's date format ``YYYY/MM/YYYY-MM-DD`` makes them): every
        folder below the daily one starts with a digit and none is a PARA folder (``1 Projects``)."""
        daily = self.daily_dir
        if folder == daily:
            return True
        if daily and not folder.startswith(f"{daily}/"):
            return False
        parts = folder[len(daily) + 1 :].split("/") if daily else folder.split("/")
        tops = set(self.managed_roots())
        return parts[0] not in tops and all(p[:1].isdigit() for p in parts)

    def daily_of_note(self, vault_path: str) -> str | None:
        """The file name in memory/ (``2026-11-27.md``, or a session note's ``2026-11-27-1430.md``) a note in the
        daily folder or a date sub-folder of it stands for, wherever the person keeps it there; None for any
        other note."""
        folder, _, name = vault_path.rpartition("/")
        return name if day_note_date(name) and self.in_daily(folder) else None

    # -- vault -> memory -------------------------------------------------------------------------------
    def file_for_note(self, vault_path: str) -> str | None:
        """The memory file a vault note mirrors, if the forward mapping leads back to exactly this note, or it
        is a daily note in a date sub-folder of the daily folder (it is followed where it is)."""
        daily = self.daily_of_note(vault_path)
        if daily is not None:
            return f"workspace/memory/{daily}"
        candidate = self._file_candidate(vault_path)
        if candidate and vault_path in (self.file_note(candidate), self.legacy_note(candidate)):
            return candidate
        return None

    def legacy_note(self, mem_path: str) -> str | None:
        """Where vaultsync put a session note or an import before they had places of their own (the agent
        folder's ``memory/``). A note found there is read and written where it is, so a vault made then goes on
        syncing rather than taking it for deleted; new ones go to their new places."""
        sub = mem_path.removeprefix("workspace/memory/")
        if sub == mem_path or not (("/" not in sub and session_date(sub)) or sub.startswith(f"{IMPORTS}/")):
            return None
        return f"{self.agent_dir()}/memory/{sub}"

    def _file_candidate(self, vault_path: str) -> str | None:
        agent = self.agent_dir() + "/"
        archive = self.agent_archive_dir() + "/"
        if vault_path.startswith(agent):
            rest = vault_path[len(agent) :]
            if rest in WORKSPACE_FILES or rest.startswith(f"{USERS_DIR}/"):
                return f"workspace/{rest}"
            if rest.startswith(f"{IMPORTS}/"):
                return f"workspace/memory/{rest}"
            if rest.startswith("memory/"):
                return f"workspace/{rest}"
            if rest.startswith("life/"):
                return rest
            return None
        if vault_path.startswith(archive):
            return f"workspace/memory/archive/{vault_path[len(archive) :]}"
        para = self.para_of_path(vault_path)
        if para:
            return f"life/{para}/{vault_path.split('/', 1)[1]}"
        return None

    def unit_of_note(self, vault_path: str) -> str | None:
        """The unit key a note carries (a fact note, or a conflict copy beside one, its fact; an entity note its
        entity; a mirrored note its file), from the path alone; None for a note that is none of these."""
        folder, _, name = vault_path.rpartition("/")
        stem = name.removesuffix(".md").partition(CONFLICT_MARK)[0]
        in_facts = folder.endswith(f"/{FACTS_DIR}")
        entity_dir = folder.removesuffix(f"/{FACTS_DIR}") if in_facts else folder
        rel = self.entity_rel_of_dir(entity_dir)
        if rel and in_facts:
            return fact_key(rel, stem)
        if rel and stem == entity_dir.rsplit("/", 1)[-1]:
            return entity_key(rel)
        mem_path = self.file_for_note(vault_path)
        return file_key(mem_path) if mem_path else None

    def para_of_path(self, vault_path: str) -> str | None:
        top = vault_path.split("/", 1)[0]
        for key, folder in self.layout.para_folders().items():
            if folder == top:
                return key
        return None

    def entity_rel_of_dir(self, vault_dir: str) -> str | None:
        para = self.para_of_path(vault_dir)
        if not para or "/" not in vault_dir:
            return None
        return f"{para}/{vault_dir.split('/', 1)[1]}"

    def reserved_life_dirs(self) -> frozenset[str]:
        """life/ folders that would land on the folders holding workspace files."""
        return frozenset({f"resources/{self.layout.agent}", f"archives/{self.layout.agent}"})

    def reserved_dirs(self) -> tuple[str, str]:
        """Vault folders that hold workspace files, so they are never read as entities."""
        return self.agent_dir(), self.agent_archive_dir()

    def managed_roots(self) -> list[str]:
        return [*self.layout.para_folders().values(), self.daily_dir]
