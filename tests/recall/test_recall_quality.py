"""Recall quality on vault-example: questions a person would ask, each with the fact or daily-note line that
answers it. The share answered in the top five (recall@5) must not fall below what the ranking reaches today;
a ranking change that loses answers fails here. The same kind of set over the generated 50k memory is in
``benchmarks/recall.py``."""

from __future__ import annotations

from helpers.twoway import Env

from vaultsync.app.recall import RecallOptions, recall

# (question, the answer: a fact id, or "daily-note path:line")
QUESTIONS = [
    ("who is Sarah Chen", "sarah-chen-001"),
    ("when is the weekly Atlas check-in now", "sarah-chen-005"),
    ("what does Sarah want before meetings", "sarah-chen-004"),
    ("where does Miguel work", "miguel-ortiz-004"),
    ("when is firmware v0.9 due", "atlas-005"),
    ("why are two pilot units silent", "atlas-006"),
    ("how many sensor modules were ordered", "atlas-004"),
    ("when is the leadership readout", "sarah-chen-006"),
    ("did the apartment deposit come back", "old-apartment-005"),
    ("when did Nora move out of Alder Street", "old-apartment-003"),
    ("how does Li Wei like to be contacted", "li-wei-002"),
    ("工厂参观", "li-wei-004"),
    ("样品 DHL 发货", "li-wei-005"),
    ("which group owns Project Atlas after the reorg", "acme-corp-"),
    ("Acme invoices payment terms", "acme-corp-"),
    ("humidity compensation calibration failed modules", "memory/2026-11-29.md:6"),
    ("photos moved to the NAS", "memory/2026-11-29.md:4"),
    ("badge access for the pilot offices", "memory/2026-11-27.md:3"),
    ("Miguel release candidate test units", "memory/2026-12-01.md:7"),
    ("Wi-Fi silent pilot units Miguel thinks", "memory/2026-11-30.md:4"),
]
THRESHOLD = 0.9  # measured 1.0 (20 of 20) when the set was written


def answered(hits: list, answer: str) -> bool:
    for hit in hits[:5]:
        if ":" in answer:
            path, line = answer.rsplit(":", 1)
            if hit.path == path and hit.lines and hit.lines[0] <= int(line) <= hit.lines[1]:
                return True
        elif hit.id and hit.id.startswith(answer):
            return True
    return False


def test_recall_at_5_on_vault_example(env: Env) -> None:
    missed = [q for q, a in QUESTIONS if not answered(recall(env.cfg, q, RecallOptions(limit=5)).hits, a)]
    score = 1 - len(missed) / len(QUESTIONS)
    assert score >= THRESHOLD, f"recall@5 {score:.2f} < {THRESHOLD}; missed: {missed}"
