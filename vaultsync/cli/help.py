"""Help a person can use: two or three examples and the docs at the end of every command's ``--help``, and
``vaultsync help [command]`` (and a bare ``vaultsync``) printing the help with exit 0.

The examples live in one table, by command path, so a command without them fails ``tests/cli/test_help.py``
(``tests/cli/test_help_examples.py`` runs every example on a temporary home). The docs are the pages shipped
inside the package (``vaultsync/docs/``, a copy of the repository's ``docs/``), named by their path on this
machine, so the link works offline and always matches the installed version.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path
from typing import Any

# command path -> (example, what it does); every parser's help ends with its examples
EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "": [
        ("vaultsync init --yes", "find OpenClaw's workspace and Obsidian's vault, write the config"),
        ("vaultsync sync", "one pass both ways, committed to git"),
        ("vaultsync doctor", "check every link, from the config to the plugins"),
    ],
    "init": [
        ("vaultsync init --yes", "find the workspace and the vault; ask nothing"),
        ("vaultsync init --agent main --vault ~/Obsidian/Main --config ~/main.toml", "one agent of several"),
        ("vaultsync init --workspace ~/clawd --life ~/life --vault ~/Clawd --config ~/clawd.toml", "paths given"),
    ],
    "sync": [
        ("vaultsync sync --dry-run", "what a pass would change; writes nothing"),
        ("vaultsync sync", "one pass both ways, then git commits"),
        ("vaultsync sync --json", "the report for a script"),
    ],
    "status": [
        ("vaultsync status", "the last run, open conflicts, held changes, what the next pass would do"),
        ("vaultsync status --json", "the same as JSON"),
    ],
    "accept": [
        ("vaultsync status", "the changes held: file, writer, size before and after"),
        ("vaultsync accept all", "carry every held change now, committed as you"),
    ],
    "restore": [
        ('vaultsync restore "3 Resources/agent/MEMORY.md"', "MEMORY.md back on both sides, as the last commit has it"),
        ("vaultsync restore Daily --at HEAD", "every daily note, as a given commit holds them"),
    ],
    "schedule": [
        ("vaultsync schedule install", "a pass every hour, the janitor daily, the review weekly (cron)"),
        ("vaultsync schedule status", "the entries, the next run and the last"),
    ],
    "schedule install": [
        ("vaultsync schedule install", "a pass every hour from cron"),
        ("vaultsync schedule install --every 30m", "every half hour instead"),
    ],
    "schedule remove": [
        ("vaultsync schedule remove", "take this config's entries out of the crontab"),
        ("vaultsync schedule status", "check that nothing is left"),
    ],
    "schedule status": [
        ("vaultsync schedule status", "the entries, the next run, the last run and the log"),
        ("vaultsync schedule status --json", "the same as one JSON document"),
        ("vaultsync status", "the same last run, with what the next pass would do"),
    ],
    "service": [
        ("vaultsync service install", "keep serve running, restarted when it fails"),
        ("vaultsync service status", "up since when, and the last error"),
    ],
    "service install": [
        ("vaultsync service install", "serve, started now and at every login or boot"),
        ("vaultsync service install --watch", "serve, watch and the hourly pass, all in the service"),
    ],
    "service status": [
        ("vaultsync service status", "installed where, up since when, the last error"),
        ("vaultsync service status --json", "the same as JSON"),
    ],
    "service restart": [
        ("vaultsync service restart", "stop and start it, e.g. after a new token"),
        ("vaultsync service status", "check that it is up again"),
    ],
    "service remove": [
        ("vaultsync service remove", "stop it and take out what install wrote"),
        ("vaultsync service status", "check that it is gone"),
    ],
    "service run": [
        ("vaultsync service run", "what the service runs: serve, kept running, until Ctrl-C"),
        ("vaultsync service run --watch --every 30m", "with watch and a pass every half hour"),
    ],
    "doctor": [
        ("vaultsync doctor", "every link, ok or the problem and the command that fixes it"),
        ("vaultsync doctor --json", "the same as JSON; exit 0 only when all is well"),
    ],
    "janitor": [
        ("vaultsync janitor --dry-run", "which sections and daily notes would move to the archive"),
        ("vaultsync janitor", "archive them, then sync"),
    ],
    "review": [
        ("vaultsync review", "write this week's review note"),
        ("vaultsync review --regenerate sarah-chen --dry-run", "the summary a regeneration would write"),
        ("vaultsync review --fix", "apply the fixes ticked in the review notes"),
    ],
    "extract": [
        ("vaultsync extract --dry-run", "what the [extract] command would propose from new daily notes"),
        ("vaultsync extract", "file the proposals in the inbox, then sync"),
    ],
    "completion": [
        ("vaultsync completion bash > ~/.vaultsync-completion.bash", "the bash script (source it from ~/.bashrc)"),
        ("vaultsync completion fish > ~/.vaultsync.fish", "the fish script"),
    ],
    "obsidian": [
        ("vaultsync obsidian install", "put the vault plugin into the vault, pointed at the API"),
        ("vaultsync obsidian install --json", "the same, reported as JSON"),
    ],
    "obsidian install": [
        ("vaultsync obsidian install", "copy the plugin and write its address and token"),
        ("vaultsync obsidian install --url http://127.0.0.1:8766", "for a serve on another port"),
    ],
    "openclaw": [
        ("vaultsync openclaw install", "the OpenClaw plugin beside memory-core, pointed at the API"),
        ("vaultsync openclaw install --mode slot", "instead of memory-core, which it disables"),
    ],
    "openclaw install": [
        ("vaultsync openclaw install", "link the packaged plugin into OpenClaw and write its settings"),
        ("vaultsync openclaw install --url http://127.0.0.1:8766", "for a serve on another port"),
        ("vaultsync openclaw install --json", "what was run (or is to be run), as JSON"),
    ],
    "watch": [
        ("vaultsync watch", "a pass shortly after files change, until Ctrl-C"),
        ("vaultsync watch --json", "each pass's report as one line of JSON"),
    ],
    "recall": [
        ('vaultsync recall "firmware drift"', "search the whole memory, current facts first"),
        ("vaultsync recall tea --entity sarah-chen --status active", "one entity's current facts"),
        ("vaultsync recall atlas --json", "the hits as JSON"),
    ],
    "log": [
        ("vaultsync log", "the latest changes across the memory"),
        ("vaultsync log sarah-chen --limit 5", "who changed an entity, when, and what"),
    ],
    "serve": [
        ("vaultsync serve", "the local API for the plugins, until Ctrl-C"),
        ("vaultsync service install", "keep it running instead"),
    ],
    "mcp": [
        ("vaultsync mcp", "the MCP tools on standard input and output, for an MCP client to start"),
        ("vaultsync mcp --config ~/.config/vaultsync/config.toml", "for one config"),
    ],
    "help": [
        ("vaultsync help", "every command"),
        ("vaultsync help schedule install", "one command's options and examples"),
    ],
}
# the page and heading of each command in the docs
ANCHORS = {"": "quickstart.md"}


def docs() -> Path:
    """The docs shipped in the package."""
    return Path(str(resources.files("vaultsync") / "docs"))


def link(path: str) -> str:
    top = path.split(" ")[0]
    page = ANCHORS.get(top, f"cli.md#vaultsync-{top}")
    return f"{docs() / page}" + ("" if top else f", every command: {docs() / 'cli.md'}")


def epilog(path: str) -> str:
    examples = EXAMPLES.get(path, [])
    width = max((len(command) for command, _ in examples), default=0)
    lines = [f"  {command:<{width}}  # {what}" for command, what in examples]
    return "examples:\n" + "\n".join(lines) + f"\n\ndocs: {link(path)}"


def parsers(parser: argparse.ArgumentParser, path: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every parser by command path ("" for the top), sub-commands included."""
    found = {path: parser}
    for action in parser._actions:  # argparse keeps its sub-parsers there; there is no public way to list them
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found |= parsers(child, f"{path} {name}".strip())
    return found


def add_examples(root: argparse.ArgumentParser) -> None:
    """Give every parser its examples and docs link, shown after its options, as written."""
    for path, parser in parsers(root).items():
        parser.epilog = epilog(path)
        parser.formatter_class = argparse.RawDescriptionHelpFormatter


def add_command(sub: Any, root: argparse.ArgumentParser) -> None:
    helper = sub.add_parser("help", help="print the help of vaultsync or of one command")
    helper.add_argument("topic", nargs="*", metavar="COMMAND", help="a command, e.g. sync or schedule install")
    helper.set_defaults(run=lambda args: show(root, args.topic))


def show(root: argparse.ArgumentParser, topic: list[str]) -> int:
    """Print the help of ``topic`` (a command path); an unknown one is refused as a mistyped command is."""
    known = parsers(root)
    path = " ".join(topic)
    if path not in known:
        root.parse_args([*topic, "--help"])  # says which word is wrong, with the nearest one, and exits 2
    known[path].print_help()
    return 0
