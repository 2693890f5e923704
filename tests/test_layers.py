"""The house's layers, read from the imports themselves: a test fails the moment a module reaches a layer it must
not, so docs/architecture.md's folder map stays true.

faces (cli.py, watch.py, server/) -> app/ -> engine/ -> core/ -> memory/, vault/, state/, git/ -> leaves
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "vaultsync"
FOLDERS = {"app", "engine", "core", "memory", "vault", "state", "git", "server"}
FACE_MODULES = {"cli", "watch", "__main__"}
# What each layer may import, besides the leaves (which every layer may).
ALLOWED: dict[str, set[str]] = {
    "leaf": set(),
    "memory": {"memory"},
    "vault": {"vault"},
    "state": {"state"},
    "git": {"git"},
    "core": {"core", "memory", "vault", "state"},
    "engine": {"engine", "core", "memory", "vault", "state", "git"},
    "app": {"app", "engine", "core", "memory", "vault", "state", "git"},
    "face": {"app"},
}
FACE_LEAVES = {"model", "config"}  # a face reads the config and prints the model; nothing else below app/


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        yield ".".join(("vaultsync", *parts)).removesuffix(".__init__"), path


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "leaf"  # the package itself: __version__
    if parts[1] in FOLDERS:
        return "face" if parts[1] == "server" else parts[1]
    return "face" if parts[1] in FACE_MODULES else "leaf"


def imports(path: Path, module: str) -> Iterator[tuple[str, list[str], int]]:
    """(module imported, names taken from it, line) for every vaultsync import of ``path``, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("vaultsync"):
                    yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).rstrip(".")
            if not base.startswith("vaultsync"):
                continue
            names = [alias.name for alias in node.names]
            # ``from vaultsync.git import tree`` imports a module; ``from vaultsync.keys import FACT`` a name.
            for name in names:
                sub = f"{base}.{name}"
                if (PACKAGE.parent / (sub.replace(".", "/") + ".py")).exists() or (
                    PACKAGE.parent / sub.replace(".", "/")
                ).is_dir():
                    yield sub, [], node.lineno
                else:
                    yield base, [name], node.lineno


ALL = list(modules())


@pytest.mark.parametrize(("module", "path"), ALL, ids=[m for m, _ in ALL])
def test_each_module_imports_only_the_layers_below_it(module: str, path: Path) -> None:
    own = layer_of(module)
    wrong = []
    for target, _, line in imports(path, module):
        theirs = layer_of(target)
        if theirs == "leaf":
            if own == "face" and target.split(".")[-1] not in FACE_LEAVES and target != "vaultsync":
                wrong.append(f"line {line}: a face imports the leaf {target}; go through app/")
            continue
        if theirs not in ALLOWED[own]:
            wrong.append(f"line {line}: {own} imports {target} ({theirs})")
    assert not wrong, f"{module} crosses a layer:\n" + "\n".join(wrong)


@pytest.mark.parametrize(("module", "path"), ALL, ids=[m for m, _ in ALL])
def test_no_module_takes_another_modules_private_name(module: str, path: Path) -> None:
    taken = [
        f"line {line}: {name} from {target}"
        for target, names, line in imports(path, module)
        for name in names
        if name.startswith("_") and not name.endswith("__") and target != module
    ]
    assert not taken, f"{module} imports private names:\n" + "\n".join(taken)


def test_the_module_graph_has_no_cycle() -> None:
    """Lazy imports included: a cycle through a function-level import is still a knot in the house."""
    graph = {module: {t for t, _, _ in imports(path, module) if t != module} for module, path in ALL}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                cycle = [*trail[trail.index(nxt) :], nxt] if nxt in trail else [node, nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_only_the_git_layer_runs_git() -> None:
    """Every git process is started from vaultsync/git/, so its errors, locks and environment have one home."""
    runners = []
    for module, path in ALL:
        if layer_of(module) == "git":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value == "git":
                parent_calls = "subprocess" in path.read_text(encoding="utf-8")
                if parent_calls:
                    runners.append(f"{module}: line {node.lineno}")
    assert not runners, "git run outside vaultsync/git/:\n" + "\n".join(runners)


def test_modules_stay_small() -> None:
    """A module about one thing stays well under 450 lines; a longer one is two things."""
    long = {m: n for m, p in ALL if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert not long, f"split these by responsibility: {long}"


def test_layer_rules_see_a_crossing() -> None:
    """The checks above can fail: a memory module importing the vault side is caught."""
    assert "vault" not in ALLOWED["memory"] and "memory" not in ALLOWED["vault"]
    assert layer_of("vaultsync.memory.tree") == "memory" and layer_of("vaultsync.vault.scan") == "vault"
    assert layer_of("vaultsync.cli") == "face" and layer_of("vaultsync.keys") == "leaf"
