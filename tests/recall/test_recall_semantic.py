"""The optional semantic re-ranker against a real HTTP embeddings endpoint on 127.0.0.1 whose vectors are known:
a tiny deterministic server speaking ``POST /v1/embeddings``, one dimension per concept (a word list), so a
paraphrase's nearest text is known in advance. It records every text it was sent."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from helpers.server import AUTH, running_server
from helpers.twoway import Env

from vaultsync.app.recall import RecallOptions, recall
from vaultsync.app.recall_dense import embed_recall, semantic_state
from vaultsync.config import Embeddings

TOM = "areas/people/tom"
ALLERGY = "Tom is allergic to peanuts in food"
CONCEPTS = (
    {"allergic", "allergy", "ill", "sick", "peanuts"},
    {"food", "ramen", "eat"},
    {"trucks"},
)
# Shares "food" (and the name) with each of Tom's facts alike; bm25 favours the shorter ones.
QUESTION = "which food makes Tom ill or sick"


def vector(text: str) -> list[float]:
    words = re.findall(r"[a-z]+", text.lower())
    return [0.1, *(float(sum(w in c for w in words)) for c in CONCEPTS)]


@dataclass
class Fake:
    url: str
    sent: list[str] = field(default_factory=list)
    requests: int = 0


@pytest.fixture
def fake() -> Iterator[Fake]:
    state = Fake("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests += 1
            state.sent += body["input"]
            data = [{"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(body["input"])]
            answer = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1/embeddings"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def tom(env: Env) -> Env:
    folder = env.life / TOM
    folder.mkdir(parents=True)
    facts = [
        {"id": "tom-001", "fact": ALLERGY, "category": "health", "status": "active"},
        {"id": "tom-002", "fact": "Tom's favourite food is ramen", "category": "preference", "status": "active"},
        {"id": "tom-003", "fact": "Tom likes food trucks", "category": "preference", "status": "active"},
    ]
    (folder / "items.json").write_text(json.dumps(facts), encoding="utf-8")
    (folder / "summary.md").write_text("# Tom\n\nA neighbour.\n", encoding="utf-8")
    assert env.sync().exit_code == 0
    return env


def _on(env: Env, url: str) -> Env:
    """The re-ranker turned on in the config file (for the CLI and the server) and in the config in hand."""
    with env.config_path.open("a", encoding="utf-8") as f:
        f.write(f'\n[recall.embeddings]\nurl = "{url}"\nmodel = "fake"\n')
    return Env(env.root, replace(env.cfg, embeddings=Embeddings(url, "fake")))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_blend_puts_a_paraphrase_first(tom: Env, fake: Fake) -> None:
    lexical = recall(tom.cfg, QUESTION, RecallOptions(limit=5)).hits
    assert lexical[0].text != ALLERGY  # the words alone favour a shorter fact
    on = _on(tom, fake.url)
    report = embed_recall(on.cfg)
    assert report is not None and report.error is None and report.embedded == report.texts == report.have
    result = recall(on.cfg, QUESTION, RecallOptions(limit=5, explain=True))
    assert result.hits[0].text == ALLERGY, [h.text for h in result.hits]
    assert result.semantic == "on"
    assert result.hits[0].explain is not None and result.hits[0].explain["cosine"] == pytest.approx(1.0, abs=0.02)


def test_endpoint_down_answers_lexically_and_says_so(tom: Env) -> None:
    off = recall(tom.cfg, QUESTION, RecallOptions(limit=5)).hits
    down = _on(tom, f"http://127.0.0.1:{_closed_port()}/v1/embeddings")
    report = embed_recall(down.cfg)
    assert report is not None and report.embedded == 0 and "unreachable" in (report.error or "")
    result = recall(down.cfg, QUESTION, RecallOptions(limit=5, explain=True))
    assert [h.text for h in result.hits] == [h.text for h in off]
    assert (
        result.semantic is not None and result.semantic.startswith("lexical only:") and "unreachable" in result.semantic
    )
    cmd = [sys.executable, "-m", "vaultsync.cli", "recall", QUESTION, "--explain", "--config", str(down.config_path)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "semantic: lexical only" in out.stdout, out.stdout + out.stderr
    state = semantic_state(down.cfg)
    assert state is not None and "0 of" in state and "unreachable" in state
    cmd = [sys.executable, "-m", "vaultsync.cli", "status", "--config", str(down.config_path)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert "semantic re-ranker: 0 of" in out.stdout and "unreachable" in out.stdout, out.stdout + out.stderr


def test_only_changed_texts_are_embedded_again(tom: Env, fake: Fake) -> None:
    on = _on(tom, fake.url)
    first = embed_recall(on.cfg)
    assert first is not None and first.embedded > 3 and ALLERGY in fake.sent
    fake.sent.clear()
    again = embed_recall(on.cfg)
    assert again is not None and again.embedded == 0 and fake.sent == []
    items = on.life / TOM / "items.json"
    facts = json.loads(items.read_text(encoding="utf-8"))
    facts[2]["fact"] = "Tom likes food trucks on Fridays"
    items.write_text(json.dumps(facts), encoding="utf-8")
    third = embed_recall(on.cfg)
    assert third is not None and fake.sent == ["Tom likes food trucks on Fridays"] and third.pruned == 1


def test_a_pass_never_calls_the_endpoint(tom: Env, fake: Fake) -> None:
    on = _on(tom, fake.url)
    items = on.life / TOM / "items.json"
    facts = json.loads(items.read_text(encoding="utf-8"))
    facts.append({"id": "tom-004", "fact": "Tom moved to Leeds", "category": "context", "status": "active"})
    items.write_text(json.dumps(facts), encoding="utf-8")
    assert on.sync().exit_code == 0
    assert fake.requests == 0


def test_get_recall_explain_shows_the_semantic_part(tom: Env, fake: Fake) -> None:
    on = _on(tom, fake.url)
    assert embed_recall(on.cfg) is not None
    with running_server(on.config_path) as url:
        answer = httpx.get(f"{url}/recall", params={"q": QUESTION, "explain": "true"}, headers=AUTH, timeout=60)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["semantic"] == "on"
    assert body["hits"][0]["text"] == ALLERGY and body["hits"][0]["explain"]["cosine"] > 0.95


def test_the_config_table_is_checked(tom: Env) -> None:
    from vaultsync.config import load
    from vaultsync.errors import ConfigError

    text = tom.config_path.read_text(encoding="utf-8")
    for table, said in (
        ('[recall.embeddings]\nurl = "localhost:11434"\nmodel = "m"\n', "must start with http://"),
        ('[recall.embeddings]\nurl = "http://127.0.0.1:1/v1/embeddings"\n', "model is empty"),
        ('[recall.embeddings]\nurl = "http://x"\nmodel = "m"\nkey = "k"\n', "unknown key(s) key"),
        ("[recall]\nembedings = 1\n", "expected [recall.embeddings]"),
    ):
        tom.config_path.write_text(text + "\n" + table, encoding="utf-8")
        with pytest.raises(ConfigError, match=re.escape(said)):
            load(tom.config_path)
    tom.config_path.write_text(
        text + '\n[recall.embeddings]\nurl = "http://x/v1/embeddings"\nmodel = "m"\nkey_file = "k.txt"\n',
        encoding="utf-8",
    )
    cfg = load(tom.config_path)
    assert cfg.embeddings.model == "m" and cfg.embeddings_key == tom.config_path.parent.resolve() / "k.txt"
