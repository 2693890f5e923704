"""OpenClaw's marked lines and blocks, as ``text/markers.py`` finds them: a rewrite that keeps them is told from one
that drops or changes any of them, the inside of a block included."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vaultsync.text.markers import dropped, marked

MEMORY = (
    "# Long-Term Memory\n\n## Consolidated Memory (2026-12-01)\n\n"
    "<!-- openclaw-memory-lineage:atlas-sensor -->\n"
    "<!-- openclaw-memory-promotion:1764590400000:91f3d07e2b55 -->\n"
    "- Atlas uses the SEN66. Source: memory/2026-12-01.md#L3-L3 <!-- trigger: sensor --> <!-- importance: 7 -->\n"
    "- Plain entry.\n"
)
SUMMARY = (
    "# Nora Lind\n\nProse.\n\n## Notes\n<!-- openclaw:human:start -->\nCall, do not email.\n"
    "<!-- openclaw:human:end -->\n\n## Light Sleep\n<!-- openclaw:dreaming:light:start -->\n- a\n"
    "<!-- openclaw:dreaming:light:end -->\n"
)


def test_marked_finds_each_line_and_block() -> None:
    assert marked(MEMORY) == MEMORY.splitlines(keepends=True)[4:7]
    assert marked(SUMMARY) == [
        "<!-- openclaw:human:start -->\nCall, do not email.\n<!-- openclaw:human:end -->\n",
        "<!-- openclaw:dreaming:light:start -->\n- a\n<!-- openclaw:dreaming:light:end -->\n",
    ]
    assert marked("<!-- observed: 2026-05-10 | status: superseded -->\n\n- Prefer x.\n") == [
        "<!-- observed: 2026-05-10 | status: superseded -->\n"
    ]
    assert marked("<!-- a comment of the person's -->\n<!-- openclaw:human:start -->\nnever closed\n") == []


def test_dropped_names_what_a_rewrite_lost() -> None:
    assert dropped(SUMMARY, "# Nora Lind\n\nNew prose.\n" + SUMMARY[SUMMARY.index("## Notes") :]) == []
    assert dropped(SUMMARY, SUMMARY.replace("Call, do not email.", "Email.")) == [marked(SUMMARY)[0]]
    assert dropped(MEMORY, MEMORY.replace("<!-- importance: 7 -->", "")) == [marked(MEMORY)[2]]
    assert dropped(MEMORY, MEMORY.replace("\n", "\r\n")) == []


@given(st.lists(st.sampled_from([*MEMORY.splitlines(keepends=True), *SUMMARY.splitlines(keepends=True)]), max_size=30))
def test_a_text_keeps_its_own_markers(lines: list[str]) -> None:
    text = "".join(lines)
    assert dropped(text, text) == []
    for found in marked(text):
        assert found in text
        assert dropped(text, text.replace(found, "", 1)) or text.count(found) > 1
