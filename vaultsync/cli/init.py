"""``vaultsync init``: the paths given, or found (OpenClaw's agents, Obsidian's vaults) and asked for only when
there is a real choice; then the config and the vault made ready, and the next command named.

The finding is ``app/discover.py``'s; what is chosen between several candidates, and how it is asked, is this
face's: ``--yes`` never asks, and never guesses between two of the person's vaults.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from vaultsync.api import (
    ConfigError,
    Found,
    FoundVault,
    FoundWorkspace,
    InitResult,
    NotARepository,
    find_setup,
    life_of,
)
from vaultsync.cli.failure import fail, fail_on
from vaultsync.model import ExitCode

NEW_VAULT = Path("~/Obsidian/Memory")  # the vault init names when Obsidian lists none


class Unanswered(Exception):
    """No usable answer to a question (the input ended): the person passes the option instead."""


def init_command(args: argparse.Namespace, path: Path) -> int:
    from vaultsync.api import git_missing, init_vault

    missing = git_missing()
    if missing:
        return fail(False, "setup", missing)
    try:
        found = find_setup(profile=args.openclaw_profile) if not (args.workspace and args.vault) else None
        for problem in found.problems if found else ():
            print(f"warning: {problem}", file=sys.stderr)
        workspace = Path(args.workspace) if args.workspace else _workspace(found, args)
        life = Path(args.life) if args.life else life_of(workspace.expanduser())
        if not args.life:
            print(f"life: {life} (the workspace's own)")
        vault = Path(args.vault) if args.vault else _vault(found, args)
        result = init_vault(workspace, life, vault, path, args.remote, args.clone)
    except (ConfigError, Unanswered) as exc:
        return fail_on(False, exc)
    except NotARepository as exc:  # git refuses the vault's repository (another user owns it): the person's call
        return fail_on(False, exc, ExitCode.SAFETY_STOP, lead="stopped: ")
    _print_result(result)
    given = ["--config", str(path)] if args.config else []
    print(f"next: vaultsync sync {' '.join(given)}".rstrip())
    return ExitCode.CLEAN


def _workspace(found: Found | None, args: argparse.Namespace) -> Path:
    """The OpenClaw workspace: the agent named by ``--agent``, the only one, or the one the person picks (with
    ``--yes``, OpenClaw's default agent)."""
    assert found is not None
    agents = found.workspaces
    if args.agent:
        chosen = next((w for w in agents if w.agent == args.agent), None)
        if chosen is None:
            names = ", ".join(w.agent for w in agents)
            raise ConfigError(f"--agent {args.agent}: OpenClaw has no such agent in {found.openclaw_config} ({names})")
    elif len(agents) == 1:
        chosen = agents[0]
    else:
        print(f"OpenClaw has {len(agents)} agents, each with its own workspace ({found.openclaw_config}):")
        for n, agent in enumerate(agents, 1):
            print(f"  {n}) {agent.agent}: {agent.path}{' (default)' if agent.default else ''}{_missing(agent.path)}")
        default = next((w for w in agents if w.default), agents[0])
        if args.yes:
            chosen = default
        else:
            chosen = agents[_ask(f"which agent's memory? [1-{len(agents)}, Enter: {default.agent}] ", agents, default)]
        others = [w.agent for w in agents if w is not chosen]
        print(f"  (for {', '.join(others)}: vaultsync init --agent NAME with another --config and --vault)")
    if not chosen.path.is_dir():
        raise ConfigError(
            f"{chosen.path}: OpenClaw's workspace for agent {chosen.agent} does not exist yet; start OpenClaw once "
            "(`openclaw onboard`) or pass --workspace DIR (looked in: " + ", ".join(found.looked_in[:2]) + ")"
        )
    print(f"workspace: {chosen.path} (OpenClaw agent {chosen.agent}, {_from(chosen)})")
    return chosen.path


def _from(workspace: FoundWorkspace) -> str:
    return "OpenClaw's default workspace" if workspace.source.startswith("OpenClaw") else f"from {workspace.source}"


def _missing(path: Path) -> str:
    return "" if path.is_dir() else " (missing)"


def _vault(found: Found | None, args: argparse.Namespace) -> Path:
    """The vault: the only one Obsidian lists, the one the person picks among several (``--yes`` refuses to
    guess), or a new one when Obsidian lists none."""
    assert found is not None
    vaults = [v for v in found.vaults if v.path.is_dir()]
    new = NEW_VAULT.expanduser()
    if not vaults:
        print(f"vault: {new} (new: Obsidian lists no vault; open it with Open folder as vault)")
        return new
    if len(vaults) == 1:
        print(f"vault: {vaults[0].path} (listed by Obsidian, {vaults[0].source})")
        return vaults[0].path
    print(f"Obsidian lists {len(vaults)} vaults:")
    for n, vault in enumerate(vaults, 1):
        print(f"  {n}) {vault.path}{' (open last)' if vault.last_open else ''}")
    print(f"  n) a new vault: {new}")
    if args.yes:
        raise ConfigError(
            f"Obsidian lists {len(vaults)} vaults; say which with --vault DIR (one above, or {NEW_VAULT} for a new one)"
        )
    picked = _ask(f"which vault? [1-{len(vaults)}, or n] ", [*vaults, None], None)
    chosen = [*vaults, None][picked]
    path = chosen.path if isinstance(chosen, FoundVault) else new
    print(f"vault: {path}")
    return path


def _ask(prompt: str, choices: Sequence[object], default: object) -> int:
    """The index of the answer: a number from 1, ``n`` for the last choice when it is None (a new one), Enter for
    ``default``; asked again, three times at most, on anything else."""
    for _ in range(3):
        try:
            answer = input(prompt).strip().lower()
        except EOFError:
            break
        if not answer and default is not None:
            return list(choices).index(default)
        if answer == "n" and choices[-1] is None:
            return len(choices) - 1
        if answer.isdigit() and 1 <= int(answer) <= len(choices) - (choices[-1] is None):
            return int(answer) - 1
        print(f"  answer with a number from the list{' or n' if choices[-1] is None else ''}")
    raise Unanswered("no answer to choose with; pass the option instead (--agent NAME, --vault DIR)")


def _print_result(result: InitResult) -> None:
    if result.life_created:
        print(f"created the life folder (it was missing): {result.life_created}")
    print(f"config: {result.config_path}")
    if result.cloned:
        print("cloned the vault from its remote (origin)")
    for rel in result.created:
        print(f"created: {rel}")
    for rel in result.kept:
        print(f"kept (already there): {rel}")
    for rel in result.updated:
        print(f"updated (your entries kept): {rel}")
    if result.repo_created:
        print("created a git repository in the vault")
    if result.remote_added:
        print("added the remote origin; the next pass pushes to it")
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}")
    if result.token_created:
        print(f"created the API token (mode 0600): {result.token_path}")
