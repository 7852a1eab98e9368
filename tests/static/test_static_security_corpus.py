"""The labelled security corpus: every planted positive found, no near-miss flagged.

Prints the precision/recall table by category that docs/static.md carries.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from support.static_corpus import CORPUS

from aces_bench.static.security import patterns, scan_text


def _found(case: dict) -> list:
    return scan_text(case["file"], case["text"])


@pytest.mark.parametrize("case", CORPUS["positives"], ids=lambda c: c["id"])
def test_positive_found(case):
    got = {f.pattern_id for f in _found(case)}
    assert set(case["expect"]) <= got, f"{case['id']}: expected {case['expect']}, got {sorted(got)}"


@pytest.mark.parametrize("case", CORPUS["negatives"], ids=lambda c: c["id"])
def test_negative_not_flagged(case):
    got = [(f.pattern_id, f.excerpt) for f in _found(case)]
    assert got == [], f"{case['id']}: near-miss flagged: {got}"


def test_precision_recall_table(capsys):
    """Per category: TP = expected ids found, FN = expected ids missed, FP = findings in negatives."""
    cat = {pid: c.p.category for pid, c in patterns().items()}
    tp: dict[str, int] = defaultdict(int)
    fn: dict[str, int] = defaultdict(int)
    fp: dict[str, int] = defaultdict(int)
    for case in CORPUS["positives"]:
        got = {f.pattern_id for f in _found(case)}
        for pid in case["expect"]:
            (tp if pid in got else fn)[cat[pid]] += 1
    for case in CORPUS["negatives"]:
        for f in _found(case):
            fp[f.category] += 1
    rows = ["| category | planted | found | missed | near-miss flagged | precision | recall |", "|---|---|---|---|---|---|---|"]
    for c in sorted(set(tp) | set(fn) | set(fp)):
        prec = tp[c] / (tp[c] + fp[c]) if tp[c] + fp[c] else float("nan")
        rec = tp[c] / (tp[c] + fn[c]) if tp[c] + fn[c] else float("nan")
        rows.append(f"| {c} | {tp[c] + fn[c]} | {tp[c]} | {fn[c]} | {fp[c]} | {prec:.2f} | {rec:.2f} |")
    with capsys.disabled():
        print(f"\n{len(CORPUS['positives'])} positives, {len(CORPUS['negatives'])} negatives\n" + "\n".join(rows))
    assert sum(fn.values()) == 0 and sum(fp.values()) == 0
