"""Which stand-ins are behind a number: the trials computed from, read for the reference
agent, an offline (loopback) model and the heuristic judge (``reports/standin.py`` holds
their names and the mark the report prints beside such a number).

The judge only matters for numbers that rest on a judged metric: a verifier-graded
outcome does not name it.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlparse

import pandas as pd

from aces_bench.core.metrics import metric_names
from aces_bench.core.outcomes import COMPOSITE, OUTCOME, OUTCOME_ONLY, OUTCOME_PER_PROTOCOL
from aces_bench.reports.standin import HEURISTIC_JUDGE, OFFLINE_MODEL, REFERENCE_AGENT

_LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


def is_loopback(url: str | None) -> bool:
    if not url:
        return False
    host = urlparse(url if "//" in url else f"//{url}").hostname or ""
    return host in _LOOPBACK or host.startswith("127.")


def offline_model_runs(members: Iterable) -> set[str]:
    """The run ids whose model endpoint is on the loopback interface (from provenance)."""
    out: set[str] = set()
    for m in members:
        prov = getattr(m, "provenance", None)
        if prov is not None and prov.spec.harness.requires_model and is_loopback(prov.spec.model.base_url):
            out.update(str(r) for r in m.run_ids)
    return out


def _judged(outcome: str | None, trials: pd.DataFrame) -> bool:
    if outcome is None:
        return True
    if outcome in (COMPOSITE, OUTCOME_ONLY) or outcome in metric_names("judged"):
        return True
    if outcome in (OUTCOME, OUTCOME_PER_PROTOCOL) and "outcome_source" in trials.columns:
        return bool((trials["outcome_source"].astype(str) == "judged").any())
    return False


def stand_ins(trials: pd.DataFrame, offline_runs: set[str] | frozenset[str] = frozenset(),
              outcome: str | None = None) -> list[str]:
    """The stand-ins behind a number computed from ``trials`` (on ``outcome``; None: any)."""
    if trials is None or not len(trials):
        return []
    out = []
    agents = trials["agent_label"].astype(str) if "agent_label" in trials.columns else pd.Series(dtype=str)
    if (trials["harness"].astype(str) == "reference").any() or agents.str.startswith("reference agent").any():
        out.append(REFERENCE_AGENT)
    if offline_runs and trials["run_id"].astype(str).isin(offline_runs).any():
        out.append(OFFLINE_MODEL)
    judges = trials["judge_label"].dropna().astype(str) if "judge_label" in trials.columns else pd.Series(dtype=str)
    if judges.str.startswith("heuristic").any() and _judged(outcome, trials):
        out.append(HEURISTIC_JUDGE)
    return out
