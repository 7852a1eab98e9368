"""Stand-ins: parts of a run that replace what the ACES paper used, so its numbers are
not comparable with the paper's.

The embedded defaults run offline: the reference agent (deterministic, non-LLM) instead
of a model-driven harness, the heuristic judge instead of an LLM judge, a model served
on the loopback interface (a scripted or local server) instead of a hosted one. A
number produced with any of them carries ``STAND_IN_MARK`` and names them, in the HTML,
the figures (hatched or hollow series) and the LaTeX captions.

Which of them are behind a number is the analysis's to say (``aces_bench.analysis.standin``);
this module names them and prints the mark.
"""

from __future__ import annotations

STAND_IN_MARK = "stand-in: not comparable with the paper"
REFERENCE_AGENT = "reference agent (deterministic, non-LLM)"
HEURISTIC_JUDGE = "heuristic judge (offline)"
OFFLINE_MODEL = "offline model (loopback endpoint)"


def stand_in_text(names: list[str]) -> str:
    """``"stand-in: not comparable with the paper (reference agent ..., heuristic judge ...)"``; "" when none."""
    return f"{STAND_IN_MARK} ({', '.join(names)})" if names else ""
