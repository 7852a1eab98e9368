"""What a study will cost before it starts, and a cap on what it does cost while it runs.

The estimate is trials x expected tokens per trial (``study.expected_input_tokens``,
``study.expected_output_tokens``) x the model's price in litellm's cost map. The cap
(``study.max_cost_usd``) refuses to start a study whose estimate is above it, and
stops a running one once the real usage Harbor's agents report (``cost_usd``, or
their token counts at the litellm price) crosses it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from harbor.models.trial.result import TrialResult

from aces_bench.config.spec import RunSpec
from aces_bench.errors import RunError

log = logging.getLogger("aces_bench.cost")


@dataclass(frozen=True)
class Price:
    model: str  # the cost-map key the price came from
    input: float  # USD per token
    output: float


def model_price(name: str | None) -> Price | None:
    """The model's per-token price in litellm's cost map (``provider/model`` or bare), or None."""
    if not name:
        return None
    import litellm

    for key in (name, name.split("/", 1)[-1]):
        entry = litellm.model_cost.get(key)
        if entry and entry.get("input_cost_per_token") is not None:
            return Price(key, float(entry["input_cost_per_token"]), float(entry.get("output_cost_per_token") or 0.0))
    return None


@dataclass(frozen=True)
class CostEstimate:
    trials: int
    input_tokens: int  # per trial
    output_tokens: int
    price: Price | None

    @property
    def usd(self) -> float | None:
        if self.price is None:
            return None
        return self.trials * (self.input_tokens * self.price.input + self.output_tokens * self.price.output)

    def summary(self, model: str | None) -> str:
        head = (f"study: {self.trials} trial(s) to run; expected {self.input_tokens:,} input + "
                f"{self.output_tokens:,} output tokens per trial")
        if self.price is None:
            return f"{head}; cost unknown ({model or 'no model'} has no price in litellm's cost map)"
        return (f"{head}; estimated cost ${self.usd:,.4f} at litellm's price for {self.price.model} "
                f"(${self.price.input * 1e6:,.2f} / ${self.price.output * 1e6:,.2f} per million tokens)")


def estimate(spec: RunSpec, trials: int) -> CostEstimate:
    s = spec.study
    return CostEstimate(trials, s.expected_input_tokens, s.expected_output_tokens, model_price(spec.model.name))


def check_cap(spec: RunSpec, est: CostEstimate) -> None:
    """Refuse to start when the estimate is above ``study.max_cost_usd`` (or cannot be made)."""
    cap = spec.study.max_cost_usd
    if cap is None:
        return
    if est.usd is None:
        raise RunError(
            f"study.max_cost_usd={cap} is set but {spec.model.name or 'the model'} has no price in litellm's "
            "cost map, so the cost cannot be estimated or capped",
            where="study.max_cost_usd", fix="drop the cap, or set model.name to a priced litellm model",
        )
    if est.usd > cap:
        raise RunError(
            f"the estimated cost ${est.usd:,.4f} ({est.trials} trials) is above study.max_cost_usd=${cap:,.4f}",
            where="study.max_cost_usd",
            fix="raise study.max_cost_usd, or run fewer trials (skill.cases, study.n_attempts)",
        )


def trial_cost(result: TrialResult, price: Price | None) -> float:
    """What one finished trial cost: the agent's own figure, else its tokens at ``price``."""
    agent = result.agent_result
    if agent is None:
        return 0.0
    if agent.cost_usd is not None:
        return float(agent.cost_usd)
    if price is None:
        return 0.0
    return (agent.n_input_tokens or 0) * price.input + (agent.n_output_tokens or 0) * price.output


@dataclass
class CostGuard:
    """Adds up real usage as trials end; cancels the job once it crosses the cap."""

    cap: float | None
    price: Price | None
    spent: float = 0.0
    finished: list[str] = field(default_factory=list)
    tripped: bool = False
    job_task: asyncio.Task | None = None

    async def on_end(self, event) -> None:
        self.spent += trial_cost(event.result, self.price)
        self.finished.append(event.trial_name)
        if self.cap is not None and self.spent > self.cap and not self.tripped:
            self.tripped = True
            log.warning("real cost $%.4f crossed study.max_cost_usd=$%.4f: stopping the study", self.spent, self.cap)
            if self.job_task is not None:
                self.job_task.cancel()

    def stopped_error(self, total: int, job_dir) -> RunError:
        ran = ", ".join(self.finished[:8]) + (" ..." if len(self.finished) > 8 else "")
        return RunError(
            f"stopped: real usage ${self.spent:,.4f} crossed study.max_cost_usd=${self.cap:,.4f} after "
            f"{len(self.finished)} of {total} trial(s) ({ran}); the trials that ran are kept",
            where=job_dir,
            fix="raise study.max_cost_usd and re-run the same command to resume",
        )


def cost_by_arm(trials, headline_lift: float | None) -> tuple[list[dict], float | None]:
    """Tokens and cost per condition, and the dollars one point of lift costs.

    A point is one percentage point of the headline outcome's lift; its price is the
    extra mean cost per with-skill trial over the baseline, divided by the lift in
    points. None when a cost is unknown or the lift is not positive. Trials without a
    cost (no agent result, an unpriced model) are counted in ``n_costed`` terms, never
    as $0.
    """
    rows: list[dict] = []
    means: dict[str, float] = {}
    if trials is None or len(trials) == 0 or "condition" not in trials:
        return rows, None
    for condition, group in trials.groupby("condition", sort=True):
        cost = group["cost_usd"] if "cost_usd" in group else None
        known = cost.dropna() if cost is not None else []
        row = {
            "condition": str(condition),
            "n_trials": int(len(group)),
            "input_tokens": int(group["input_tokens"].fillna(0).sum()) if "input_tokens" in group else 0,
            "output_tokens": int(group["output_tokens"].fillna(0).sum()) if "output_tokens" in group else 0,
            "n_costed": int(len(known)),
            "cost_usd": float(known.sum()) if len(known) else None,
            "mean_cost_usd": float(known.mean()) if len(known) else None,
        }
        rows.append(row)
        if row["mean_cost_usd"] is not None:
            means[row["condition"]] = row["mean_cost_usd"]
    per_point = None
    if headline_lift is not None and headline_lift > 0 and {"with_skill", "baseline"} <= means.keys():
        per_point = (means["with_skill"] - means["baseline"]) / (headline_lift * 100)
    return rows, per_point
