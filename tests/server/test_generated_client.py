"""A client generated from the served ``/openapi.json`` (openapi-python-client, warnings as failures) drives a
real server: remember -> recall -> supersede -> history, each answer parsed into the document's typed models."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest
from helpers.server import TOKEN, running_server
from helpers.twoway import SARAH, Env

PACKAGE = "vaultsync_api_client"


@pytest.fixture
def generated(tmp_path: Path, env: Env) -> Iterator[tuple[ModuleType, str]]:
    with running_server(env.config_path) as url:
        spec = tmp_path / "openapi.json"
        spec.write_bytes(httpx.get(f"{url}/openapi.json").content)
        config = tmp_path / "generator.yaml"
        config.write_text(f"package_name_override: {PACKAGE}\npost_hooks: []\n")
        done = subprocess.run(
            [
                str(Path(sys.executable).with_name("openapi-python-client")),
                "generate",
                "--path", str(spec),
                "--meta", "none",
                "--config", str(config),
                "--output-path", str(tmp_path / PACKAGE),
                "--fail-on-warning",
            ],
            capture_output=True,
            text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        sys.path.insert(0, str(tmp_path))
        try:
            yield importlib.import_module(PACKAGE), url
        finally:
            sys.path.remove(str(tmp_path))
            for name in [n for n in sys.modules if n == PACKAGE or n.startswith(f"{PACKAGE}.")]:
                del sys.modules[name]


def test_a_generated_client_drives_the_api(generated: tuple[ModuleType, str]) -> None:
    package, url = generated
    api = importlib.import_module(f"{PACKAGE}.api.memory")
    models = importlib.import_module(f"{PACKAGE}.models")
    remember, recall, supersede, get_history = (
        importlib.import_module(f"{api.__name__}.{name}") for name in ("remember", "recall", "supersede", "get_history")
    )
    client = package.AuthenticatedClient(base_url=url, token=TOKEN)

    made = remember.sync_detailed(client=client, body=models.RememberBody(entity=SARAH, fact="Sarah Chen keeps bees"))
    assert made.status_code == 201 and isinstance(made.parsed, models.Written)
    fact = made.parsed.fact
    assert isinstance(fact, models.Fact) and fact.record["fact"] == "Sarah Chen keeps bees"
    assert made.headers["location"].startswith(f"/facts/{fact.id}?")

    found = recall.sync(client=client, q="keeps bees", kind="fact")
    assert isinstance(found, models.HitList)
    assert found.hits[0].id == fact.id and found.hits[0].entity == SARAH
    why = recall.sync(client=client, q="Sarah bees", kind="fact", explain=True).hits[0].explain
    assert isinstance(why, models.Explain) and why.bm25 > 0 and why.entity == 0.7  # the query names Sarah

    replaced = supersede.sync(
        fact.id, client=client, body=models.SupersedeBody(fact="Sarah Chen keeps wasps"), entity=SARAH
    )
    assert isinstance(replaced, models.Written) and isinstance(replaced.fact, models.Fact)
    assert replaced.previous.record["status"] == "superseded"

    told = get_history.sync(client=client, target=fact.id)
    assert isinstance(told, models.History)
    assert [c.what for c in told.changes][:2] == [f"status: active -> superseded (by {replaced.fact.id})", "created"]

    missing = supersede.sync_detailed("no-such-fact", client=client, body=models.SupersedeBody(fact="x"))
    assert missing.status_code == 404 and isinstance(missing.parsed, models.Problem)
