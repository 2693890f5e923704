"""The kept answers of ``Idempotency-Key`` (``state/answers.py``, ``app/answers.py``) in a real sqlite file: a
repeat gets the first answer for a day and not after, another request with the key is refused, a claim left
unanswered waits and then is given up, and an answer that asks to try again is not kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultsync.app.answers import Answer, fingerprint
from vaultsync.errors import KeyPending, KeyReused
from vaultsync.state.answers import ABANDONED, KEEP, AnswerStore

FIRST = (201, [("content-type", "application/json"), ("etag", '"abc"')], b'{"fact": {"id": "sarah-chen-007"}}')


def test_an_answer_is_kept_a_day_for_the_same_request_only(tmp_path: Path) -> None:
    store = AnswerStore(tmp_path / ".vaultsync")
    assert store.claim("k1", "request-a", now=1000.0) is None
    store.keep("k1", FIRST)
    assert store.claim("k1", "request-a", now=1000.0 + KEEP - 1) == FIRST
    with pytest.raises(KeyReused) as reused:
        store.claim("k1", "request-b", now=1001.0)
    assert reused.value.status == 422 and "k1" in reused.value.line()
    assert store.claim("k1", "request-b", now=1000.0 + KEEP + 1) is None  # a day later the key is new again


def test_a_claim_not_answered_yet_waits_then_is_given_up(tmp_path: Path) -> None:
    store = AnswerStore(tmp_path / ".vaultsync")
    assert store.claim("k2", "request-a", now=50.0) is None
    with pytest.raises(KeyPending) as pending:
        store.claim("k2", "request-a", now=51.0)
    assert pending.value.status == 409 and pending.value.retry
    assert store.claim("k2", "request-a", now=50.0 + ABANDONED + 1) is None  # its server stopped answering
    store.drop("k2")
    assert store.claim("k2", "request-a", now=52.0 + ABANDONED) is None


def test_only_answers_that_do_not_ask_to_try_again_are_kept() -> None:
    assert Answer(*FIRST).kept and Answer(404, [], b"{}").kept and Answer(422, [], b"{}").kept
    assert not Answer(503, [("retry-after", "2")], b"{}").kept
    assert not Answer(409, [("Retry-After", "2")], b"{}").kept  # a pass was running: the repeat may pass
    assert not Answer(500, [], b"{}").kept


def test_the_same_request_is_the_same_json_value() -> None:
    one = fingerprint("POST", b"/facts", b"", b'{"entity": "a", "fact": "b"}')
    assert one == fingerprint("POST", b"/facts", b"", b'{"fact":"b",\n "entity":"a"}')
    assert one != fingerprint("POST", b"/facts", b"", b'{"entity": "a", "fact": "c"}')
    assert one != fingerprint("POST", b"/facts", b"entity=a", b'{"entity": "a", "fact": "b"}')
    assert one != fingerprint("PATCH", b"/facts", b"", b'{"entity": "a", "fact": "b"}')
    deep = b"[" * 100_000
    assert fingerprint("POST", b"/facts", b"", deep) != fingerprint("POST", b"/facts", b"", b"[" * 99_999)
