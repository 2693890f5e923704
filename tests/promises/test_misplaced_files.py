"""Files and settings in places people put them by mistake: each gets one message naming the file, the problem
and the fix, and nothing is lost (docs/safety.md, section 5).

Real files, a real git repository, the real command line; nothing of vaultsync is mocked.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.inputs import Env, assert_exit, dumps, edit_body, errors, fact, make_env

from vaultsync.cli import main
from vaultsync.model import ExitCode


def synced(tmp_path: Path) -> Env:
    env = make_env(tmp_path)
    env.entity("areas/people/ana", [fact("a1", "Ana keeps bees")], "# Ana\n")
    assert_exit(env.sync(), ExitCode.CLEAN)
    return env


def test_a_config_path_that_is_a_folder_is_one_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["sync", "--config", str(tmp_path)])

    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{tmp_path}: is a folder, not a config file" in err and str(tmp_path / "config.toml") in err


def test_a_stale_ref_lock_is_named_with_the_fix(tmp_path: Path) -> None:
    env = synced(tmp_path)
    ref = subprocess.run(["git", "-C", str(env.vault), "symbolic-ref", "HEAD"], capture_output=True, text=True)
    lock = env.vault / ".git" / f"{ref.stdout.strip()}.lock"
    lock.write_bytes(b"")
    edit_body(env, "2 Areas/people/ana/facts/a1.md", "bees", "two hives of bees")

    report = env.sync()

    assert_exit(report, ExitCode.SAFETY_STOP)
    said = [p.message for p in errors(report)]
    assert len(said) == 1 and f"{lock} exists" in said[0] and "delete that file and sync again" in said[0], said
    assert lock.exists(), "vaultsync never deletes a lock"
    assert env.items("areas/people/ana")[0]["fact"] == "Ana keeps bees"
    lock.unlink()
    assert_exit(env.sync(), ExitCode.CLEAN)
    assert env.items("areas/people/ana")[0]["fact"] == "Ana keeps two hives of bees"


@pytest.mark.parametrize("where", ["", "areas"])
def test_items_json_outside_an_entity_folder_says_where_it_belongs(tmp_path: Path, where: str) -> None:
    env = synced(tmp_path)
    stray = env.write(env.life / where / "items.json", dumps([fact("x1", "A fact with no entity")]))

    report = env.sync()

    assert_exit(report, ExitCode.SKIPPED_INPUT)
    said = [p.message for p in errors(report) if p.path == str(stray)]
    assert len(said) == 1, [p.line() for p in report.problems]
    assert "an entity is a folder of its own" in said[0] and "move it into one" in said[0]
    assert "not markdown" not in said[0] and "outside life/" not in said[0]
    assert stray.read_bytes() == dumps([fact("x1", "A fact with no entity")])


def test_a_symlinked_memory_folder_is_refused_clearly_and_left_as_it_is(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    real = tmp_path / "elsewhere" / "memory"
    real.mkdir(parents=True)
    (real / "2026-01-27.md").write_text("# 2026-01-27\n\nA day.\n", encoding="utf-8")
    (env.workspace / "memory").symlink_to(real)
    env.entity("areas/people/ana", [fact("a1", "Ana keeps bees")], "# Ana\n")

    report = env.sync()

    assert_exit(report, ExitCode.SKIPPED_INPUT)
    said = [p.message for p in errors(report) if p.path == str(env.workspace / "memory")]
    assert len(said) == 1 and "symbolic link" in said[0] and str(real) in said[0], [p.line() for p in report.problems]
    assert "replace the link by the folder" in said[0]
    assert (real / "2026-01-27.md").read_text(encoding="utf-8") == "# 2026-01-27\n\nA day.\n"
    assert (env.vault / "2 Areas/people/ana/facts/a1.md").exists(), "the rest of the pass goes on"
