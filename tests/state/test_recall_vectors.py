"""The recall index's vectors: stored as signed bytes with one scale, compared by cosine, keyed by model and text."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.state import recall_vectors as vectors
from vaultsync.state.recall import Doc
from vaultsync.state.recall_file import open_index

finite = st.floats(min_value=-10, max_value=10, allow_nan=False)
pairs = st.integers(min_value=2, max_value=64).flatmap(
    lambda n: st.tuples(st.lists(finite, min_size=n, max_size=n), st.lists(finite, min_size=n, max_size=n))
)


def _exact(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


@settings(max_examples=200, deadline=None)
@given(pairs)
def test_the_stored_cosine_is_within_a_few_hundredths_of_the_exact_one(pair: tuple[list[float], list[float]]) -> None:
    a, b = pair
    if math.hypot(*a) < 1e-3 or math.hypot(*b) < 1e-3:
        return
    assert abs(vectors.cosine(vectors.quantise(a), vectors.quantise(b)) - _exact(a, b)) < 0.05


def test_a_vector_is_one_byte_a_dimension() -> None:
    scale, packed = vectors.quantise([0.5, -1.0, 0.25] * 128)
    assert len(packed) == 384 and scale > 0


def test_missing_texts_are_those_without_a_vector_of_this_model(tmp_path: Path) -> None:
    index, _ = open_index(tmp_path / "recall.sqlite")
    docs = [Doc("life/a", "fact", "life", "a/items.json", body) for body in ("one", "two", "two")]
    index.replace(["life/a"], docs, {})
    assert sorted(t for _, t in vectors.missing(index, "m")) == ["one", "two"]  # a shared text is sent once
    vectors.store(index, [(vectors.key("m", "one"), vectors.quantise([1.0, 0.0]))])
    assert [t for _, t in vectors.missing(index, "m")] == ["two"]
    assert sorted(t for _, t in vectors.missing(index, "other")) == ["one", "two"]  # another model's: none
    assert vectors.coverage(index, "m") == vectors.Coverage(1, 2)
    index.replace(["life/a"], [Doc("life/a", "fact", "life", "a/items.json", "two")], {})
    assert vectors.prune(index, "m") == 1 and vectors.load(index) == {}
    index.close()
