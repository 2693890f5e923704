"""The house's layers, read from the imports themselves: a test fails the moment a module reaches a layer it must
not, so docs/architecture.md's folder map stays true. A module's layer is its folder.

faces (cli/, server/) -> api.py (the public surface) -> app/ (use cases) -> write_path/ -> engine/ -> core/
    -> memory/, vault/, state/, git/ -> system/, text/ -> the shared values at the package root
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import REPO

PACKAGE = REPO / "vaultsync"
FACES = {"cli", "server"}
# The floors every layer stands on: the shared values at the root, what is asked of the OS, text formats.
GROUND = {"leaf", "system", "text"}
# What each layer may import, besides the ground floors (which every layer may).
ALLOWED: dict[str, set[str]] = {
    "leaf": set(),
    "system": {"system"},
    "text": {"text"},
    "memory": {"memory"},
    "vault": {"vault"},
    "state": {"state"},
    "git": {"git"},
    "core": {"core", "memory", "vault", "state"},
    "engine": {"engine", "core", "memory", "vault", "state", "git"},
    "write_path": {"write_path", "engine", "core", "memory", "vault", "state", "git"},
    "app": {"app", "write_path", "core", "memory", "vault", "state", "git"},
    "surface": {"app"},  # vaultsync/api.py: the public surface, over the use cases
    "face": {"face", "surface"},  # the command line hands a command to its own face module
}
FOLDERS = set(ALLOWED) - {"leaf", "surface", "face"} | FACES
FACE_LEAVES = {"model", "config"}  # a face reads the config and prints the model; nothing else below app/
ROOT_MODULES_AT_MOST = 10  # the shared values and the surface; everything else lives in a room


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        yield ".".join(("vaultsync", *parts)).removesuffix(".__init__"), path


def layer_of(module: str) -> str:
    """A module's layer is its folder: ``vaultsync.cli.parser`` is a face, ``vaultsync.system.fs`` the system
    floor; a module at the package root is a shared value (a leaf), but for the surface."""
    parts = module.split(".")
    if len(parts) == 1:
        return "leaf"  # the package itself: __version__
    if parts[1] == "api":
        return "surface"
    if parts[1] in FACES:
        return "face"
    if parts[1] in FOLDERS and (len(parts) > 2 or (PACKAGE / parts[1]).is_dir()):
        return parts[1]
    return "leaf"


def may_import(own: str, theirs: str) -> bool:
    """Whether layer ``own`` may import layer ``theirs``: its own list, the shared values (for everyone), and the
    system and text floors (for everyone above them; they stand beside each other, on the shared values)."""
    if theirs in ALLOWED[own] or theirs == "leaf":
        return True
    return theirs in ("system", "text") and own not in GROUND


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
        if own == "face" and theirs in GROUND:
            if target.split(".")[-1] not in FACE_LEAVES and target != "vaultsync":
                wrong.append(f"line {line}: a face imports {target} ({theirs}); go through vaultsync.api")
            continue
        if not may_import(own, theirs):
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
    """Every git process is started from vaultsync/git/, so its errors, locks and environment have one home: no
    call is handed a command line (a list or tuple starting with "git") anywhere else."""
    runners = []
    for module, path in ALL:
        if layer_of(module) == "git":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            argv = node.args[0]
            if isinstance(argv, ast.List | ast.Tuple) and argv.elts:
                first = argv.elts[0]
                if isinstance(first, ast.Constant) and first.value == "git":
                    runners.append(f"{module}: line {node.lineno}")
    assert not runners, "git run outside vaultsync/git/:\n" + "\n".join(runners)


def test_modules_stay_small() -> None:
    """A module about one thing stays under 400 lines; a longer one is two things."""
    long = {m: n for m, p in ALL if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, f"split these by responsibility: {long}"


def test_layer_rules_see_a_crossing() -> None:
    """The checks above can fail: a memory module importing the vault side is caught."""
    assert "vault" not in ALLOWED["memory"] and "memory" not in ALLOWED["vault"]
    assert layer_of("vaultsync.memory.tree") == "memory" and layer_of("vaultsync.vault.scan") == "vault"
    assert layer_of("vaultsync.cli") == "face" and layer_of("vaultsync.keys") == "leaf"


# -- rules that cannot be walked around -----------------------------------------------------------------------
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


MODULE_PATHS = dict(ALL)


def _surface() -> dict[str, str]:
    """The public surface's table of names (``vaultsync/api.py``'s ``_SURFACE``): name -> where it lives."""
    for node in _tree(PACKAGE / "api.py").body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_SURFACE" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("vaultsync/api.py has no _SURFACE table")


def origin(module: str, name: str, seen: frozenset[str] = frozenset()) -> str:
    """The module that defines ``name`` as ``module`` exports it, following re-exports (``from x import name``)
    and the public surface's table; a submodule stands for itself."""
    if module == "vaultsync.api" and name in (table := _surface()):
        target = table[name]
        return f"{target}.{name}" if f"{target}.{name}" in MODULE_PATHS else origin(target, name, seen)
    path = MODULE_PATHS.get(module)
    if path is None or module in seen:
        return module
    for node in _tree(path).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("vaultsync"):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    sub = f"{node.module}.{alias.name}"
                    return sub if sub in MODULE_PATHS else origin(node.module, alias.name, seen | {module})
    return module


def crossings_by_reexport(module: str, path: Path) -> list[str]:
    """Names taken through another module that come from a layer the importer may not reach."""
    own = layer_of(module)
    wrong = []
    for target, names, line in imports(path, module):
        for name in names:
            home = origin(target, name)
            theirs = layer_of(home)
            if theirs in GROUND or home == module:
                continue
            allowed = ALLOWED[own] | ({"app"} if own == "face" and target == "vaultsync.api" else set())
            if theirs not in allowed:
                wrong.append(f"line {line}: {name} from {target} is {home}'s ({theirs})")
    return wrong


@pytest.mark.parametrize(("module", "path"), ALL, ids=[m for m, _ in ALL])
def test_no_name_reaches_a_layer_through_a_reexport(module: str, path: Path) -> None:
    wrong = crossings_by_reexport(module, path)
    assert not wrong, f"{module} reaches a layer through a re-export:\n" + "\n".join(wrong)


def git_argvs(tree: ast.AST) -> list[int]:
    """Lines of every command line starting with "git" (a list or tuple literal, wherever it stands: passed, or
    kept in a variable first), and of every call handed a string starting with "git " (a shell line)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Tuple) and len(node.elts) > 1:
            first, then = node.elts[0], node.elts[1]
            named = isinstance(first, ast.Constant) and first.value == "git"
            if named and (
                isinstance(then, ast.Starred) or (isinstance(then, ast.Constant) and isinstance(then.value, str))
            ):
                found.append(node.lineno)  # ["git", "commit", ...], ("git", *args): a command line, not a pair
        elif isinstance(node, ast.Call) and node.args and _runs_a_program(node.func):
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("git "):
                found.append(node.lineno)
    return found


def _runs_a_program(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in {"run", "Popen", "call", "check_call", "check_output", "system", "popen", "getoutput"}


def test_no_git_command_line_outside_the_git_layer() -> None:
    runners = [f"{m}: line {n}" for m, p in ALL if layer_of(m) != "git" for n in git_argvs(_tree(p))]
    assert not runners, "git command lines outside vaultsync/git/:\n" + "\n".join(runners)


IO_METHODS = {
    "exists", "is_dir", "is_file", "is_symlink", "stat", "lstat", "read_bytes", "read_text", "write_bytes",
    "write_text", "iterdir", "glob", "rglob", "mkdir", "unlink", "rmdir", "open", "execute", "listdir", "scandir",
}  # fmt: skip
IO_MODULES = {"sqlite3", "os", "shutil", "subprocess", "io", "vaultsync.system.fs", "vaultsync.state.base"}


def io_in(tree: ast.AST) -> list[str]:
    """File, database and process I/O in a module: imports of the modules that do it, ``open()``, and the
    I/O methods of paths and connections called on anything but ``self``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"line {node.lineno}: imports {n}" for n in names if n in IO_MODULES]
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "open":
                found.append(f"line {node.lineno}: open()")
            elif (
                isinstance(func, ast.Attribute)
                and func.attr in IO_METHODS
                and not (isinstance(func.value, ast.Name) and func.value.id == "self")
            ):
                found.append(f"line {node.lineno}: .{func.attr}()")
    return found


def test_the_decision_does_no_io() -> None:
    """core/ is values in, values out: no file, database or process is touched there, so it is tested as a
    specification and a pass's I/O is ordered in one place (engine/)."""
    impure = [f"{m} {hit}" for m, p in ALL if layer_of(m) == "core" for hit in io_in(_tree(p))]
    assert not impure, "I/O in core/:\n" + "\n".join(impure)


WRITE_PATH = "vaultsync.write_path.write"


def calls_named(tree: ast.AST, names: set[str]) -> list[int]:
    """Lines calling any of ``names``, as a function or a method, however it was imported or renamed."""
    aliases = set(names)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            aliases |= {a.asname for a in node.names if a.name in names and a.asname}
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id in aliases)
            or (isinstance(node.func, ast.Attribute) and node.func.attr in aliases)
        )
    ]


def test_only_the_write_path_takes_the_lock() -> None:
    """One place takes the run lock (``app/write.py``): no change can be written around another."""
    takers = [
        f"{m}: line {n}"
        for m, p in ALL
        if m not in (WRITE_PATH, "vaultsync.system.lock")
        for n in calls_named(_tree(p), {"run_lock"})
    ]
    assert not takers, "the run lock taken outside the write path:\n" + "\n".join(takers)


FINISH = "vaultsync.engine.finish"
# The end of a pass: applying a plan, the list of notes written but not committed, a commit (git's or the
# base's transaction), the base saved, the snapshot recorded. Only ``engine/finish.py`` calls them.
PASS_END = {"apply_plan", "list_uncommitted", "all_committed", "commit", "compact", "save", "record", "forget"}
# Outside a pass: the snapshot record writes (and first drops) the snapshot itself; the remote round commits
# the conflict copies of its merge, before the pass.
PASS_END_OWNERS = {
    "vaultsync.engine.quick": {"save", "forget"},
    "vaultsync.write_path.remote_round": {"commit"},
    "vaultsync.write_path.write": {"record"},  # the run record (``state/runs.py``), which every change gets
}


def pass_end_crossings(module: str, path: Path) -> list[str]:
    """Calls ending a pass outside ``engine/finish.py``, in engine/ and app/."""
    if layer_of(module) not in ("engine", "write_path", "app") or module == FINISH:
        return []
    names = PASS_END - PASS_END_OWNERS.get(module, set())
    return [f"{module}: line {n}" for n in calls_named(_tree(path), names)]


def test_only_the_finish_ends_a_pass() -> None:
    """One function owns the end of a pass (``engine/finish.py``): the strategies hand it what they decided, so
    the order that makes a pass safe to kill (the person's commit first, the base saved last) is written once."""
    found = [c for m, p in ALL for c in pass_end_crossings(m, p)]
    assert not found, "a pass ended outside engine/finish.py:\n" + "\n".join(found)


def test_each_rule_fails_on_a_deliberate_crossing(tmp_path: Path) -> None:
    """Every rule above, fed a module that breaks it, says so."""
    bad = {
        "git": 'argv = ["git", "commit"]\nrun(argv)\nsubprocess.run("git log", shell=True)\npair = ("git", cfg.git)\n',
        "io": "import sqlite3\nfrom pathlib import Path\nPath('x').exists()\nopen('y')\nstore.db.execute('q')\n",
        "lock": "from vaultsync.system.lock import run_lock as hold\nwith hold(path):\n    pass\nfs.run_lock(p)\n",
    }
    assert len(git_argvs(ast.parse(bad["git"]))) == 2
    assert len(io_in(ast.parse(bad["io"]))) == 4
    assert len(calls_named(ast.parse(bad["lock"]), {"run_lock"})) == 2
    # A strategy applying its own plan and committing its own notes, around the finish.
    strategy = tmp_path / "strategy.py"
    strategy.write_text(
        "from vaultsync.engine.apply import apply_plan as go\ngo(plan, trash)\nrepo.commit(paths, text, who)\n"
        "store.save(rows, [], commit=False)\nquick.record(cfg, walk)\n",
        encoding="utf-8",
    )
    assert len(pass_end_crossings("vaultsync.engine.strategy", strategy)) == 4
    assert not pass_end_crossings(FINISH, strategy)
    # A face taking an engine name through an app module's re-export, and a face importing app/ directly.
    face = tmp_path / "face.py"
    face.write_text("from vaultsync.app.sync import run_pass\nfrom vaultsync.app import sync\n", encoding="utf-8")
    MODULE_PATHS["vaultsync.app.sync_reexport"] = tmp_path / "reexport.py"
    (tmp_path / "reexport.py").write_text("from vaultsync.engine.run import run_pass\n", encoding="utf-8")
    face.write_text("from vaultsync.app.sync_reexport import run_pass\n", encoding="utf-8")
    try:
        assert crossings_by_reexport("vaultsync.cli_bad", face)
    finally:
        del MODULE_PATHS["vaultsync.app.sync_reexport"]
    assert layer_of("vaultsync.api") == "surface" and "app" not in ALLOWED["face"]


# -- the rooms, the surface and the errors ---------------------------------------------------------------------
def test_only_the_write_path_imports_the_engine() -> None:
    """A use case asks the write path for a pass; it never runs one itself, so no change skips the lock, the
    remote round, the commits as its actor or the record of runs."""
    reaching = [
        f"{m}: line {line} imports {target}"
        for m, p in ALL
        if layer_of(m) not in ("engine", "write_path")
        for target, _, line in imports(p, m)
        if layer_of(target) == "engine"
    ]
    assert not reaching, "engine/ imported outside the write path:\n" + "\n".join(reaching)


def test_the_package_root_holds_only_the_shared_values_and_the_surface() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(loose) <= ROOT_MODULES_AT_MOST, f"vaultsync/ holds {len(loose)} loose modules: {loose}"
    rooms = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert rooms == FOLDERS, f"every folder is a layer of the layer table: {sorted(rooms ^ FOLDERS)}"


def _typed_surface() -> dict[str, str]:
    """What ``api.py`` shows editors and type checkers: name -> "module" or "module:name", from the imports
    under ``if TYPE_CHECKING:``."""
    found = {}
    for node in _tree(PACKAGE / "api.py").body:
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module, "only imports under TYPE_CHECKING"
                for alias in imp.names:
                    found[alias.asname or alias.name] = imp.module + (f":{alias.name}" if alias.asname else "")
    return found


def surface_modules(table: dict[str, str]) -> list[str]:
    """Entries of a surface table that name a module rather than a function, a class or a value."""
    return [
        name
        for name, where in table.items()
        if (":" not in where and f"{where}.{name}" in MODULE_PATHS | {f"{m}.__init__": p for m, p in ALL})
        or (":" not in where and (PACKAGE.parent / where.replace(".", "/") / name).is_dir())
    ]


def test_no_surface_entry_is_a_module() -> None:
    """The faces call functions and classes: a module handed out whole is a second, untyped surface."""
    import types

    import vaultsync.api as api

    assert not surface_modules(_surface())
    assert [n for n in api.__all__ if isinstance(getattr(api, n), types.ModuleType)] == []


def test_the_typed_surface_is_the_lazy_one() -> None:
    """Editors see the ``TYPE_CHECKING`` imports, a running program the ``_SURFACE`` table: they name the same
    things in the same places, and ``__all__`` lists exactly them."""
    import vaultsync.api as api

    typed, lazy = _typed_surface(), _surface()
    every = {"Config", "Actor", "Report"}  # the types Vault's methods are annotated with, not handed out
    assert {k: v for k, v in typed.items() if k not in every or k in lazy} == lazy
    assert sorted(api.__all__) == sorted(["Vault", *lazy])


def error_homes(module: str, path: Path) -> list[str]:
    """Error classes a face catches or raises that come from a vaultsync module other than ``errors.py``."""
    caught: list[tuple[str, int]] = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            kinds = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            caught += [(k.id, node.lineno) for k in kinds if isinstance(k, ast.Name)]
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name):
            caught.append((node.exc.func.id, node.lineno))
    taken = {name: target for target, names, _ in imports(path, module) for name in names}
    wrong = []
    for name, line in caught:
        if name in taken:
            home = origin(taken[name], name)
            if home.startswith("vaultsync") and home != "vaultsync.errors":
                wrong.append(f"line {line}: {name} is {home}'s")
    return wrong


def test_every_error_a_face_renders_lives_in_errors() -> None:
    found = [f"{m} {w}" for m, p in ALL if layer_of(m) == "face" for w in error_homes(m, p)]
    assert not found, "errors a face shows, defined outside errors.py:\n" + "\n".join(found)


def test_every_error_of_the_family_lives_in_errors() -> None:
    """A ``VaultsyncError`` is what a caller is told: its kind, field and hint are read in one file."""
    import importlib
    import pkgutil

    import vaultsync
    from vaultsync.errors import VaultsyncError

    for found in pkgutil.walk_packages(vaultsync.__path__, "vaultsync."):
        if not found.name.endswith("__main__"):
            importlib.import_module(found.name)

    def family(cls: type) -> Iterator[type]:
        for sub in cls.__subclasses__():
            yield sub
            yield from family(sub)

    elsewhere = sorted(
        f"{c.__module__}.{c.__name__}" for c in family(VaultsyncError) if c.__module__ != "vaultsync.errors"
    )
    assert not elsewhere, f"define these in vaultsync/errors.py: {elsewhere}"


def test_the_new_rules_fail_on_the_old_layout(tmp_path: Path) -> None:
    """The rules above, fed the layout they replaced, say so: a use case importing the engine (the write path in
    app/), a surface handing out modules, a face catching an error an app module defines."""
    assert layer_of("vaultsync.app.write") == "app" and not may_import("app", "engine")
    assert layer_of("vaultsync.cli_parser") == "leaf" and layer_of("vaultsync.cli.parser") == "face"
    old_surface = {"memory": "vaultsync.app", "sync": "vaultsync.app.sync", "LockHeld": "vaultsync.app.write"}
    assert surface_modules(old_surface) == ["memory"]
    face = tmp_path / "face.py"
    face.write_text(
        "from vaultsync.app.facts import Unreadable\ntry:\n    pass\nexcept Unreadable:\n    raise Unreadable('x')\n",
        encoding="utf-8",
    )
    MODULE_PATHS["vaultsync.app.facts_old"] = tmp_path / "old.py"
    (tmp_path / "old.py").write_text("class Unreadable(Exception):\n    pass\n", encoding="utf-8")
    face.write_text(face.read_text(encoding="utf-8").replace("app.facts", "app.facts_old"), encoding="utf-8")
    try:
        assert len(error_homes("vaultsync.cli.face", face)) == 2
    finally:
        del MODULE_PATHS["vaultsync.app.facts_old"]
