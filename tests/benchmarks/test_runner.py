"""How the benchmark runner judges what it measured: which scale a target binds at, and what growth means."""

from __future__ import annotations

import sys

import pytest
from helpers import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

from measure import Row, Run, ScaleResult
from report import growth_of, rows_for


def _result(facts: int, seconds: dict[str, float]) -> ScaleResult:
    res = ScaleResult(facts)
    for key, value in seconds.items():
        res.add(key, Run(key, value, 40.0, 0))
    return res


def _scale(facts: int, per_fact_import: float, per_fact_status: float) -> ScaleResult:
    """A scale where vaultsync's passes take fixed ratios of its references."""
    status = per_fact_status * facts
    return _result(
        facts,
        {
            "vaultsync first import": per_fact_import * facts,
            "floor first import": per_fact_import * facts,
            "vaultsync no-change": 2.0 * status,
            "git status": status,
            "vaultsync small change": 4.0 * status,
            "vaultsync standing": 2.0 * status,
            "git status standing": status,
        },
    )


def _row(rows: list[Row], scale: str, start: str) -> Row:
    (row,) = [r for r in rows if r.scale == scale and r.benchmark.startswith(start)]
    return row


def test_growth_is_the_rise_of_time_per_fact_not_a_small_memorys_fixed_costs() -> None:
    rise, spread = growth_of({5_000: 333e-6, 50_000: 151e-6, 200_000: 161e-6})
    assert rise == pytest.approx(161 / 151)
    assert spread == pytest.approx(333 / 151)


def test_growth_finds_a_rise_between_any_two_sizes() -> None:
    rise, _ = growth_of({200_000: 150e-6, 5_000: 100e-6, 50_000: 125e-6})
    assert rise == pytest.approx(1.5)  # 200k against 5k: each step alone rose by 1.25x and 1.2x


def test_targets_bind_at_the_sizes_they_are_set_for() -> None:
    rows = rows_for([_scale(5_000, 300e-6, 20e-6), _scale(50_000, 150e-6, 12e-6), _scale(200_000, 200e-6, 12e-6)])
    no_change_5k = _row(rows, "5k", "no-change pass")
    assert (no_change_5k.ratio, no_change_5k.verdict) == (pytest.approx(2.0), "info")
    assert no_change_5k.target == "(<= 1.5x is at 50k)"
    assert _row(rows, "50k", "no-change pass").verdict == "FAIL"
    assert _row(rows, "50k", "first import").verdict == "PASS"
    assert _row(rows, "50k", "small-change pass").verdict == "FAIL"
    assert _row(rows, "200k", "first import").verdict == "info"
    growth = _row(rows, "all", "growth: first import")
    assert growth.ratio == pytest.approx(200 / 150)
    assert growth.verdict == "FAIL"
    assert growth.measured == "5k 300 us, 50k 150 us, 200k 200 us"
    assert growth.reference == "larger / smaller (max / min 2.00x)"
    status = _row(rows, "all", "growth: no-change pass")
    assert (status.ratio, status.verdict) == (pytest.approx(1.0), "PASS")


def test_each_benchmark_module_stays_small() -> None:
    """As for the package: a benchmark file over 400 lines does two jobs."""
    folder = REPO / "benchmarks"
    long = {p.name: n for p in folder.glob("*.py") if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, f"split these by job: {long}"
