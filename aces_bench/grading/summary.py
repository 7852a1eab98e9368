"""A short Markdown summary of graded trials (also printed on the terminal).

Per condition: trials, final and first-attempt pass rates, mean reward, composite,
outcome-only and the five dimensions; then every metric's mean with how many trials
it was scored on (unscored trials are left out, never counted as 0, and their
reasons listed); then one line per trial. Everything shown passes through redaction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from aces_bench.core.conditions import ALL_CONDITIONS
from aces_bench.core.metrics import dimensions, metric_names, short_name
from aces_bench.graders.dimensions import mapping_table
from aces_bench.graders.redact import redact
from aces_bench.records.trials import GradedTrial

MAX_REASONS = 8


def _mean(values: Iterable[float | None]) -> tuple[float | None, int]:
    vals = [v for v in values if v is not None]
    return (sum(vals) / len(vals) if vals else None), len(vals)


def _rate(values: Iterable[bool | None]) -> tuple[float | None, int]:
    return _mean(None if v is None else float(v) for v in values)


def _cell(value: float | None, n: int | None = None, total: int | None = None) -> str:
    text = "—" if value is None else f"{value:.3f}"
    return f"{text} ({n}/{total})" if n is not None and total is not None and n != total else text


def _metric(g: GradedTrial, name: str) -> float | None:
    m = g.metrics.get(name)
    return m.score if m else None


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def summary_markdown(graded: list[GradedTrial], *, title: str, facts: list[str]) -> str:
    """The summary; ``facts`` are bullet lines about the run (source, judge, mode, case spec)."""
    lines = [f"# {title}", ""] + [f"- {f}" for f in facts] + [""]
    conds = [c for c in ALL_CONDITIONS if any(g.condition == c for g in graded)]
    author = sorted({k for g in graded for k in g.metrics if k.startswith("author:")})

    per: list[tuple[str, Callable[[GradedTrial], float | None]]] = [
        ("reward", lambda g: g.reward), ("composite", lambda g: g.composite),
        ("outcome_only", lambda g: g.outcome_only),
    ] + [(d, (lambda g, d=d: g.dimensions.get(d))) for d in dimensions()]
    if author:
        per.append(("author_score", lambda g: g.author_score))
    rows = []
    for c in conds:
        part = [g for g in graded if g.condition == c]
        statuses = Counter(g.status for g in part)
        row = [c, f"{len(part)} ({', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))})"]
        for getter in (lambda g: g.final_pass, lambda g: g.first_attempt_pass):
            v, n = _rate(getter(g) for g in part)
            row.append(_cell(v, n, len(part)))
        for _, getter in per:
            v, n = _mean(getter(g) for g in part)
            row.append(_cell(v, n, len(part)))
        rows.append(row)
    lines += ["## By condition", "", "Means over scored trials; `(n/N)` when fewer than all were scored.", ""]
    lines += _table(["condition", "trials", "final pass", "first-attempt pass", *[p for p, _ in per]], rows)

    lines += ["", "## Metrics", ""]
    rows = []
    for name in [*metric_names(), *author]:
        row = [name]
        for c in conds:
            part = [g for g in graded if g.condition == c]
            v, n = _mean(_metric(g, name) for g in part)
            row.append(_cell(v, n, len(part)))
        rows.append(row)
    lines += _table(["metric", *conds], rows)
    lines += ["", "Dimensions from metrics: " + "; ".join(f"{r['dimension']} = {r['sources']}" for r in mapping_table())]

    reasons = Counter(
        f"{name}: {m.unscored_reason}" for g in graded for name, m in g.metrics.items()
        if m.score is None and m.unscored_reason
    )
    if reasons:
        lines += ["", "## Unscored (metric: reason, trials)", ""]
        lines += [f"- {r} — {n}" for r, n in reasons.most_common(MAX_REASONS)]
        if len(reasons) > MAX_REASONS:
            lines.append(f"- … {len(reasons) - MAX_REASONS} more reasons in grades.jsonl")

    lines += ["", "## Trials", ""]
    rows = []
    for g in sorted(graded, key=lambda g: (g.skill, g.case_id, g.condition, g.attempt)):
        rows.append([g.task_id, g.condition, str(g.attempt), g.status, _cell(g.reward),
                     *[_cell(_metric(g, m)) for m in metric_names()], _cell(g.composite),
                     "—" if g.first_attempt_pass is None else str(g.first_attempt_pass).lower()])
    lines += _table(["task", "condition", "try", "status", "reward", *[short_name(m) for m in metric_names()], "composite",
                     "first pass"], rows)
    return redact("\n".join(lines) + "\n")
