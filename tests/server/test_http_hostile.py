"""Whatever a client sends, a real ``vaultsync serve`` answers it without a 500: lone surrogates (what a JavaScript
client sends after cutting an emoji in two), odd JSON, odd paths and parameters. The answer is always JSON in
valid UTF-8, and never echoes back what it cannot encode."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import httpx
from helpers.server import AUTH, running_server
from helpers.twoway import SARAH, Env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HALF_EMOJI = "Sarah loves \ud83d"  # "😀" cut after its first UTF-16 unit


def test_a_lone_surrogate_in_a_body_is_422_saying_so(env: Env) -> None:
    before = env.items_path(SARAH).read_bytes()
    with running_server(env.config_path) as url:
        for method, route, body in [
            ("POST", "/facts", {"entity": SARAH, "fact": HALF_EMOJI}),
            ("POST", "/facts", {"entity": SARAH, "fact": "ok", "fields": {"note\udc00": 1}}),
            ("PATCH", "/facts/sarah-chen-001", {"category": HALF_EMOJI}),
            ("POST", "/facts/sarah-chen-001/supersede", {"fact": HALF_EMOJI}),
        ]:
            raw = json.dumps(body).encode("ascii")  # \ud83d, as JSON.stringify writes it
            answer = httpx.request(
                method, url + route, content=raw, headers={**AUTH, "Content-Type": "application/json"}
            )
            assert answer.status_code == 422, answer.text
            assert "surrogate" in answer.json()["detail"][0]["msg"]
    assert env.items_path(SARAH).read_bytes() == before


def _text() -> st.SearchStrategy[str]:
    halves = st.sampled_from(["\ud83d", "\ude00", "\udfff"])  # rare among all code points: asked for often
    return st.text(st.characters(codec=None, exclude_categories=()), max_size=8) | st.builds(
        lambda a, half, b: a + half + b, st.text(max_size=4), halves, st.text(max_size=4)
    )


SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | _text() | st.just(SARAH)
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text(), inner, max_size=3), max_leaves=6
)
KEYS = st.sampled_from(["entity", "fact", "by", "category", "timestamp", "source", "status", "fields", "create"])
BODY = st.dictionaries(KEYS, JSON, max_size=4) | JSON
PARAMS = st.dictionaries(st.sampled_from(["q", "query", "target", "entity", "kind", "since", "limit"]), _text())
ROUTES = st.sampled_from(
    [
        ("POST", "/facts", True),
        ("PATCH", "/facts/{}", True),
        ("POST", "/facts/{}/supersede", True),
        ("DELETE", "/facts/{}", False),
        ("GET", "/facts/{}", False),
        ("GET", "/entities/{}", False),
        ("GET", "/recall", False),
        ("GET", "/history", False),
    ]
)


def _url_part(text: str) -> str:
    """``text`` percent-encoded as its UTF-8 bytes, a lone surrogate included (as a careless client sends it)."""
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def test_no_request_gets_a_500(env: Env) -> None:
    with running_server(env.config_path) as url, httpx.Client(base_url=url, headers=AUTH, timeout=60) as client:

        @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(route=ROUTES, body=BODY, word=_text(), params=PARAMS)
        def check(route: tuple[str, str, bool], body: Any, word: str, params: dict[str, str]) -> None:
            method, path, with_body = route
            target = path.format(_url_part(word) or "x")
            target += "?" + "&".join(f"{key}={_url_part(value)}" for key, value in params.items())
            raw = json.dumps(body).encode("ascii") if with_body else None
            answer = client.request(method, target, content=raw, headers={"Content-Type": "application/json"})
            assert answer.status_code < 500, (method, target, raw, answer.text)
            if not answer.is_redirect:  # "/facts/%2F" is "/facts//", which the router answers with a redirect
                assert isinstance(json.loads(answer.content.decode("utf-8")), dict), (method, target, answer.text)

        check()
