"""Why a skill got no verdict, in one sentence with counts, and the fix.

A skill has no verdict when the gate says "no data" (no positive case has a pass
decided in both arms) or "not enough cases" (too few cases won to say it helps). The
cause is read from the same trials the gate read, with the report's own exclusion
reasons (``aces_bench.analysis.summary.excluded_reason``): a case with only judged assertions under
the offline heuristic judge (it abstains), a model judge that abstained, too few
cases, or every pair excluded for another reason. The console, the report's first
screen and ``summary.json`` (``no_verdict``) all show these rows; ``aces-bench eval``
exits 3 when there is one.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from aces_bench.analysis.summary import excluded_reason
from aces_bench.records.gate import GateVerdict
from aces_bench.records.summary import NoVerdictRow
from aces_bench.records.trials import is_negative_control

NO_VERDICT = ("no data", "not enough cases")
UNDECIDED = "outcome undecided (no reward, or the graders abstained)"
CHECK_EXAMPLE = '"assertions": [{"kind": "number", "value": 42}]'
JUDGE_FIX = "judge=litellm judge.model=openai/gpt-4o-mini"


def _paired(trials: pd.DataFrame, skill: str) -> pd.DataFrame:
    part = trials.loc[(trials["skill"].astype(str) == skill) & ~is_negative_control(trials)]
    return part.loc[part["condition"].astype(str).isin(("with_skill", "baseline"))]


def _heuristic(part: pd.DataFrame) -> bool:
    labels = part["judge_label"].dropna().astype(str) if "judge_label" in part else pd.Series(dtype=str)
    return bool(len(labels)) and all(x.startswith("heuristic") for x in labels)


def _no_reward(part: pd.DataFrame) -> int:
    """Undecided trials whose verifier had no deterministic check to score (no reward)."""
    reward = part["reward"] if "reward" in part else pd.Series([None] * len(part), index=part.index)
    return int(reward.isna().sum())


def _undecided(skill: str, verdict: str, m: int, undecided: pd.DataFrame) -> NoVerdictRow:
    n = len(undecided)
    evals = f"{skill}/evals/evals.json"
    if _no_reward(undecided) == n and _heuristic(undecided):
        return NoVerdictRow(
            skill=skill, verdict=verdict, cause="no decidable check", n_trials=m, n_affected=n,
            reason=f"no decidable check: {n} of {m} trials undecided because the cases carry only judged "
                   "assertions and the offline heuristic judge abstains",
            fix=f"add a check the verifier decides to each case in {evals} (e.g. {CHECK_EXAMPLE}), "
                f"or judge the assertions with a model: {JUDGE_FIX}")
    if _no_reward(undecided) == n:
        return NoVerdictRow(
            skill=skill, verdict=verdict, cause="judge abstained", n_trials=m, n_affected=n,
            reason=f"judge abstained: {n} of {m} trials undecided (the cases have no check the verifier decides "
                   "and the judge gave no answer)",
            fix=f"see each trial's judge evidence on the skill's page; add checks to {evals} (e.g. {CHECK_EXAMPLE})")
    return NoVerdictRow(
        skill=skill, verdict=verdict, cause="outcome undecided", n_trials=m, n_affected=n,
        reason=f"outcome undecided: {n} of {m} trials have no pass or fail (the graders abstained)",
        fix=f"add a check the verifier decides to each case in {evals} (e.g. {CHECK_EXAMPLE})")


def _excluded(skill: str, verdict: str, m: int, reasons: Counter) -> NoVerdictRow:
    n = sum(reasons.values())
    why = ", ".join(f"{k} {r}" for r, k in reasons.most_common())
    top = reasons.most_common(1)[0][0]
    if top.startswith("infrastructure") or top.startswith("model provider"):
        fix = "re-run the same command: infrastructure failures are retried (each trial's failure_cause is in trials.csv)"
    elif top == "never run":
        fix = "re-run the same command (raise study.max_cost_usd if the cost cap stopped it)"
    else:
        fix = "see the excluded trials' failure_cause in trials.csv and the skill's report page"
    return NoVerdictRow(skill=skill, verdict=verdict, cause="every pair excluded", n_trials=m, n_affected=n,
                        reason=f"every pair excluded: {n} of {m} trials left out ({why})", fix=fix)


def _too_few(gate: GateVerdict, m: int) -> NoVerdictRow:
    need = gate.settings.min_cases
    return NoVerdictRow(
        skill=gate.skill, verdict=gate.verdict, cause="too few cases", n_trials=m, n_affected=gate.n_cases,
        reason=f"too few cases: {gate.n_wins} of {gate.n_cases} cases won (and {gate.n_excluded_pairs} pair(s) "
               f"excluded); the gate needs at least {need} cases won to say a skill helps",
        fix=f"add positive cases to {gate.skill}/evals/evals.json (at least {need} that the skill can win), "
            "or lower study.gate.min_cases knowingly")


def explain(gate: GateVerdict, trials: pd.DataFrame) -> NoVerdictRow | None:
    """Why ``gate``'s skill has no verdict (None when it has one)."""
    if gate.verdict not in NO_VERDICT:
        return None
    part = _paired(trials, gate.skill)
    m = len(part)
    if m == 0:
        return NoVerdictRow(skill=gate.skill, verdict=gate.verdict, cause="no positive case", n_trials=0,
                            n_affected=0, reason="no positive case ran: every case of the skill is a negative control",
                            fix=f"add cases the skill is meant for to {gate.skill}/evals/evals.json")
    why = pd.Series([excluded_reason(r) for r in part.to_dict("records")], index=part.index, dtype=object)
    undecided = part.loc[why == UNDECIDED]
    others = Counter(r for r in why if r and r != UNDECIDED)
    if gate.verdict == "not enough cases" and gate.n_wins + gate.n_excluded_pairs < gate.settings.min_cases:
        return _too_few(gate, m)  # even every left-out pair won would not be enough: more cases are the fix
    # "no data", or "not enough cases" where the pairs left out could have made the count: they are the cause.
    if len(undecided) >= sum(others.values()) and len(undecided):
        return _decided_note(_undecided(gate.skill, gate.verdict, m, undecided), gate)
    if others:
        return _decided_note(_excluded(gate.skill, gate.verdict, m, others), gate)
    return _too_few(gate, m)


def _decided_note(row: NoVerdictRow, gate: GateVerdict) -> NoVerdictRow:
    """``row`` with what the gate had left to read, when some cases were decided ("not enough cases")."""
    if gate.verdict != "not enough cases":
        return row
    cause = "pairs left out" if row.cause == "every pair excluded" else row.cause
    reason = row.reason.replace("every pair excluded: ", "pairs left out: ", 1)
    return row.model_copy(update={"cause": cause, "reason": (
        f"{reason}; {gate.n_cases} case(s) decided, {gate.n_wins} won, where the gate needs "
        f"{gate.settings.min_cases} won")})


def no_verdict_rows(gates: list[GateVerdict], trials: pd.DataFrame) -> list[NoVerdictRow]:
    """A row per skill without a verdict, in the gate's order."""
    return [row for g in gates if (row := explain(g, trials)) is not None]
