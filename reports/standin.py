"""Stand-ins: parts of a run that replace what the ACES paper used, so its numbers are
not comparable with the paper's.

The embedded defaults run offline: the reference agent (deterministic, non-LLM) instead
of a model-driven harness, the heuristic judge instead of an LLM judge, a model served
on the loopback interface (a scripted or local server) instead of a hosted one. A
number produced with any of them carries ``STAND_IN_MARK`` and names them, in the HTML,
the figures (hatched or hollow series) and the LaTeX captions.

The judge only matters for numbers that rest on a judged metric: a verifier-graded
outcome does not name it.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlparse

import pandas as pd

from aces_bench.core.metrics import metric_names
from aces_bench.core.outcomes import COMPOSITE, OUTCOME, OUTCOME_ONLY, OUTCOME_PER_PROTOCOL

STAND_IN_MARK = "stand-in: not comparable with the paper"
REFERENCE_AGENT = "reference agent (deterministic, non-LLM)"
HEURISTIC_JUDGE = "heuristic judge (offline)"
OFFLINE_MODEL = "offline model (loopback endpoint)"
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


def stand_in_text(names: list[str]) -> str:
    """``"stand-in: not comparable with the paper (reference agent ..., heuristic judge ...)"``; "" when none."""
    return f"{STAND_IN_MARK} ({', '.join(names)})" if names else ""
