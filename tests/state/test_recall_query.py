"""What a question in a script written without spaces becomes: the pieces left between its particles and question
words, their pairs of characters as terms of their own, and the names it may hold; and the re-ranking's view of a
name inside a run of such text. Pure functions, plus a real index in memory for the document counts."""

# Full-width punctuation is what people type.
# ruff: noqa: RUF001

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vaultsync.core import rank
from vaultsync.state.recall import Doc, Filters
from vaultsync.state.recall_file import scratch_index
from vaultsync.state.recall_query import grams, terms, unspaced_names, unspaced_pieces


def words(query: str) -> list[str]:
    return [t.word for t in terms(query)]


def test_a_question_is_cut_at_its_particles_and_question_words() -> None:
    assert unspaced_pieces("李伟的工厂参观是哪天") == ["李伟", "工厂参观"]
    assert unspaced_pieces("王芳喜欢喝什么茶") == ["王芳喜欢喝", "茶"]
    assert unspaced_pieces("样品什么时候发货") == ["样品", "发货"]
    assert unspaced_pieces("会議はいつですか") == ["会議"]
    assert unspaced_pieces("是什么") == ["是什么"]  # nothing but particles: asked as typed


def test_each_pair_is_a_term_of_its_own_and_no_pair_crosses_a_particle() -> None:
    assert words("李伟的工厂参观是哪天？") == ["李伟", "工厂", "厂参", "参观"]
    found = terms("王芳喜欢喝什么茶")
    assert [t.word for t in found] == ["王芳", "芳喜", "喜欢", "欢喝", "茶"]
    assert all(t.grams for t in found)
    assert found[-1].expr == '"茶" *' and found[0].expr == '"王芳"'
    assert not {w for w in words("李伟的工厂参观是哪天") if set(w) & {"的", "是", "哪"}}


def test_a_long_question_keeps_its_topic_within_the_terms_it_may_ask() -> None:
    """Pronouns and demonstratives cut too, so a spoken question's topic is not past the first twelve pairs."""
    assert {"工厂", "参观"} <= set(words("我上周和李伟讨论过的那个工厂参观后来改到哪天了？"))
    assert words("那个工厂参观") == ["工厂", "厂参", "参观"]


def test_english_words_are_cut_as_before() -> None:
    assert words("When is the Atlas check-in?") == ["atlas", "check"]
    assert words("Li Wei 工厂参观") == ["li", "wei", "工厂", "厂参", "参观"]


def test_names_are_looked_for_inside_a_run() -> None:
    names = unspaced_names("王芳喜欢喝什么茶？ and Sam")
    assert "王芳" in names and "王芳喜欢喝什么茶" in names
    assert "sam" not in names and all(2 <= len(n) <= 8 for n in names)
    pasted = unspaced_names("王芳" * 150 + " " + "李伟" * 50 + " 张敏")
    assert "王芳" in pasted and "李伟" in pasted and "张敏" not in pasted  # a question's worth of text is read


@given(st.text(alphabet="李伟的工厂参观是哪天什么时候吗茶の会議はいつ", max_size=40))
def test_every_pair_asked_for_is_a_pair_the_index_holds(question: str) -> None:
    """A pair of the question is a pair of the same text as the index cuts it, whatever the particles."""
    indexed = set(grams(question).split())
    assert {t.word for t in terms(question)} <= indexed | {c for c in question}


def test_the_pairs_are_ored_by_bm25_not_one_phrase() -> None:
    index = scratch_index()
    texts = ["工厂参观定在 2027-01-14 上午", "王芳喜欢喝乌龙茶", "这是什么的？是的"]
    docs = [Doc(f"s{n}", "fact", "life", f"p{n}", body=t, grams=grams(t), fact_id=f"f{n}") for n, t in enumerate(texts)]
    index.replace([], docs, {})
    found = index.search(terms("李伟的工厂参观是哪天"), Filters(), 5)
    assert [c.doc.fact_id for c in found] == ["f0"]
    assert index.doc_freqs(["茶", "乌龙"]) == {"茶": 1, "乌龙": 1}  # one character counts the pairs it starts
    best = index.search(terms("王芳喜欢喝什么茶"), Filters(), 5)
    assert [c.doc.fact_id for c in best][:1] == ["f1"]
    index.close()


def test_thai_keeps_its_marks_so_its_pairs_are_the_indexed_ones() -> None:
    """Thai vowels and tone marks are no letters to a word pattern; a run cut there asked for pairs no text holds."""
    index = scratch_index()
    texts = ["ร้านกาแฟอยู่ตรงข้ามสถานี", "สถานีรถไฟปิดวันนี้"]
    docs = [Doc(f"s{n}", "fact", "life", f"p{n}", body=t, grams=grams(t), fact_id=f"f{n}") for n, t in enumerate(texts)]
    index.replace([], docs, {})
    asked = terms("ร้านกาแฟอยู่ที่ไหน")  # where is the coffee shop
    assert {t.word for t in asked} <= set(grams(texts[0]).split())  # ที่ไหน (where) is cut off
    assert [c.doc.fact_id for c in index.search(asked, Filters(), 5)][:1] == ["f0"]
    index.close()


def test_a_name_inside_a_run_of_text_is_a_mention() -> None:
    q = rank.question("王芳 乌龙茶", {"王芳": {"areas/people/wang-fang"}}, None)
    other = Doc("s", "fact", "life", "p", body="李伟说王芳喜欢喝乌龙茶", entity="areas/people/li-wei")
    assert rank.boosts(other, q) == {"entity": rank.ENTITY}
    unrelated = Doc("s", "fact", "life", "p", body="李伟喜欢喝咖啡", entity="areas/people/li-wei")
    assert rank.boosts(unrelated, q) == {}


def test_a_chinese_when_question_favours_dated_pieces() -> None:
    q = rank.question("样品什么时候发货", {}, None)
    assert q.when and rank.boosts(Doc("s", "fact", "life", "p", body="发货", ts="2026-12-01"), q) == {"when": 0.1}
