"""What a study will cost before it starts, and a study-wide cap on what it does cost.

The estimate is trials x expected tokens per trial (``study.expected_input_tokens``,
``study.expected_output_tokens``) at the model's list price (``aces_bench.core.pricing``,
the one price function). Real spend is every model call a trial's harness made, the
harness's auxiliary calls (opencode's title call, claude-code's small-model calls)
included, priced by the same function. Where the trial had a metering point (the
local sandbox's host-side proxy, :mod:`aces_bench.backends.meter`) the tokens are the
ones the provider's responses reported there; the harness's own record, written
inside the sandbox where a skill can rewrite it, is then only a claim, and a claim
that disagrees beyond a tolerance is flagged on the trial.

The cap (``study.max_cost_usd``) is for the whole study, not one command: spend is kept
in a ledger (``spend.jsonl``) in the study's budget folder (the output folder; a sweep's
or a design's root for its members), one line per finished trial, summed across resumes
and members. A run refuses to start when what was spent plus its estimate is above the
cap; while it runs, a trial is held at its start when the spend so far plus what the
running trials are expected to cost would pass the cap, and the study stops (the
finished trials are tabled and reported, marked as stopped by the cap) once no trial
can start within it, or once real spend crosses it.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from pydantic import ConfigDict, Field

from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import RunError
from aces_bench.core.io import write_json
from aces_bench.core.metering import CLAIMED, METERED, NO_MODEL, mismatch, read_meter
from aces_bench.core.pricing import Price, Usage, cost_of, estimate_trial, price_of
from aces_bench.core.versioning import VersionedRecord, load_model
from aces_bench.records.study import KINDS, record_part
from aces_bench.records.summary import CostRow
from aces_bench.run.reuse import REUSABLE

if TYPE_CHECKING:  # the report reads CostRow; Harbor's trial models are only needed to price a run
    from harbor.models.trial.result import TrialResult

log = logging.getLogger("aces_bench.cost")

LEDGER_FILE = KINDS["cost"].file
STOP_FILE = "cost-stop.json"


def model_price(name: str | None) -> Price | None:
    """The model's per-token price in litellm's cost map (``provider/model`` or bare), or None."""
    return price_of(name)


def budget_dir(spec: RunSpec) -> Path:
    """The folder whose ledger holds the study's spend (a sweep's or design's root for a member)."""
    return Path(spec.budget_dir or spec.output_dir).resolve()


@dataclass(frozen=True)
class CostEstimate:
    trials: int
    input_tokens: int  # per trial
    output_tokens: int
    price: Price | None
    model_driven: bool = True
    harness: str = ""

    @property
    def per_trial(self) -> float | None:
        if not self.model_driven:
            return 0.0
        if self.price is None:
            return None
        return estimate_trial(self.price.model, self.input_tokens, self.output_tokens)

    @property
    def usd(self) -> float | None:
        per = self.per_trial
        return None if per is None else self.trials * per

    def summary(self, model: str | None) -> str:
        if not self.model_driven:
            # Not "$0" as if measured: nothing is called, so nothing is spent or metered.
            return f"study: {self.trials} trial(s) to run; usage: no model calls ({self.harness or 'the'} agent)"
        head = (f"study: {self.trials} trial(s) to run; expected {self.input_tokens:,} input + "
                f"{self.output_tokens:,} output tokens per trial")
        if self.price is None:
            named = f"model {model!r} has" if model else "no model is set, so it has"
            return f"{head}; cost unknown ({named} no price in litellm's cost map)"
        return f"{head}; estimated cost ${self.usd:,.4f} at litellm's price for {self.price.model} ({self.price.per_million()})"


def estimate(spec: RunSpec, trials: int) -> CostEstimate:
    s = spec.study
    return CostEstimate(trials, s.expected_input_tokens, s.expected_output_tokens, model_price(spec.model.name),
                        model_driven=spec.harness.requires_model, harness=spec.harness.name)


def unpriced(cap: float, model: str | None, where: str = "study.max_cost_usd") -> RunError:
    """The refusal of a cost cap on a model litellm has no price for: nothing to hold it against."""
    return RunError(f"study.max_cost_usd={cap} is set but {model or 'the model'} has no price in litellm's "
                    "cost map, so the cost cannot be estimated or capped",
                    where=where, fix="drop the cap, or set model.name to a priced litellm model")


def check_cap(spec: RunSpec, est: CostEstimate, spent: float = 0.0, *, where: str = "study.max_cost_usd") -> None:
    """Refuse to start when what was spent plus the estimate is above ``study.max_cost_usd``."""
    cap = spec.study.max_cost_usd
    if cap is None:
        return
    if est.usd is None:
        raise unpriced(cap, spec.model.name, where)
    if spent >= cap and est.trials > 0:
        raise RunError(
            f"this study already spent ${spent:,.4f} of study.max_cost_usd=${cap:,.4f} (its ledger sums every "
            "run and member)", where=where,
            fix="raise study.max_cost_usd to run the rest; `aces-bench report` tables what already ran",
        )
    if spent + est.usd > cap:
        already = f" on top of ${spent:,.4f} already spent" if spent else ""
        raise RunError(
            f"the estimated cost ${est.usd:,.4f} ({est.trials} trials){already} is above study.max_cost_usd=${cap:,.4f}",
            where=where,
            fix="raise study.max_cost_usd, or run fewer trials (skill.cases, study.n_attempts); "
            "study.expected_input_tokens/expected_output_tokens set the per-trial estimate",
        )


# --- what one trial spent ---------------------------------------------------------------


def check_planned(spec: RunSpec, conditions: Sequence[str]) -> None:
    """The preflight's cost check, on the planned tasks' ``conditions`` (one per task), before
    any task is written: a cap on a model litellm has no price for cannot be held, and a cap
    that even the trials no store can supply would pass is refused.

    The exact estimate against the cap is the cost guard's, when the job starts
    (``runner.cost_guard``): baseline and null trials found in the reuse store are neither
    run nor counted, and which they are is known only once the tasks are emitted (their ids
    key the store). So this check counts only the trials that always run (with skill,
    placebo, forced; every trial when the study reuses nothing, ``StudySpec.reuses_trials``):
    whatever the store supplies, a fresh study would pass the cap. A study that already
    spent (a resumed one) is left to the job's guard, which counts only the trials still to
    run; a sequential study is stopped by the cap as it runs (it may stop before running
    them all). The price is looked up once, last."""
    s = spec.study
    cap = s.max_cost_usd
    if cap is None:
        return
    always = [c for c in conditions if not (s.reuses_trials and c in REUSABLE)]
    guard_decides = s.sequential or Ledger(budget_dir(spec)).spent() > 0  # see above: the guard counts these
    est = estimate(spec, len(conditions) * s.n_attempts)
    if est.usd is None:
        raise unpriced(cap, spec.model.name)
    least = replace(est, trials=len(always) * s.n_attempts)
    if guard_decides or not least.trials or least.usd is None or least.usd <= cap:
        return
    which = "every trial" if len(always) == len(conditions) else "the trials no baseline store can supply"
    raise RunError(
        f"{which} ({least.trials} of {est.trials}) are estimated at ${least.usd:,.4f}, above "
        f"study.max_cost_usd=${cap:,.4f}; nothing was written", where="study.max_cost_usd",
        fix="raise study.max_cost_usd, or run fewer trials (skill.cases, study.n_attempts); "
        "study.expected_input_tokens/expected_output_tokens set the per-trial estimate")


def claimed_usage(result: TrialResult, model: str | None = None) -> list[Usage]:
    """Every model's tokens in one trial as the harness itself recorded them.

    aces-bench's harnesses record each call (auxiliary calls included) in the agent
    result's ``metadata["aces_usage"]``; any other agent is read from Harbor's
    ``model_usage`` or, failing that, its totals under the configured model. Inside a
    sandbox these files are written where the skill can reach them: a claim, which a
    metering record (:func:`trial_spend`) overrides.
    """
    agent = result.agent_result
    if agent is None:
        return []
    recorded = (agent.metadata or {}).get("aces_usage")
    if isinstance(recorded, list):
        return [Usage(**{k: v for k, v in u.items() if k in Usage.__dataclass_fields__}) for u in recorded
                if isinstance(u, dict) and u.get("model")]
    if agent.model_usage:
        return [Usage(name, u.n_input_tokens, u.n_output_tokens, cache_read_tokens=u.n_cache_tokens)
                for name, u in agent.model_usage.items()]
    if agent.n_input_tokens or agent.n_output_tokens:
        name = model or (result.agent_info.model_info.name if result.agent_info and result.agent_info.model_info
                         else None) or "unknown"
        return [Usage(name, agent.n_input_tokens or 0, agent.n_output_tokens or 0,
                      cache_read_tokens=agent.n_cache_tokens or 0)]
    return []


@dataclass(frozen=True)
class TrialSpend:
    """What one trial spent and where that figure comes from.

    ``source`` is ``metered`` (the host-side metering proxy's record of the provider's
    responses: :mod:`aces_bench.core.metering`), ``harness claim`` (no metering point:
    the harness's own record) or ``no model calls (reference agent)``.
    """

    usage: list[Usage]
    source: str
    claimed: list[Usage] = field(default_factory=list)
    mismatch: str | None = None  # the claim disagrees with the metered tokens (one line)
    visible: list[str] | None = None  # metered: the skills the trial's requests listed
    notes: list[str] = field(default_factory=list)


def trial_dir_of(result: TrialResult) -> Path | None:
    """The trial dir Harbor wrote ``result`` in (its ``trial_uri``), or None."""
    parts = urlsplit(getattr(result, "trial_uri", None) or "")
    return Path(unquote(parts.path)) if parts.scheme == "file" and parts.path else None


def _reference(result: TrialResult) -> bool:
    agent = result.agent_result
    return agent is not None and "aces_reference" in (agent.metadata or {})


def trial_spend(result: TrialResult, model: str | None = None, trial_dir: Path | str | None = None) -> TrialSpend:
    """One trial's usage: the metering record when the trial had one, else the claim.
    ``trial_dir``: where the trial's files are now (default: where Harbor wrote them)."""
    claimed = claimed_usage(result, model)
    metered = read_meter(trial_dir if trial_dir is not None else trial_dir_of(result))
    if metered is not None:
        flag = mismatch(metered, claimed) if result.agent_result is not None else None
        return TrialSpend(metered.usage, METERED, claimed, flag, metered.visible, metered.notes)
    if _reference(result) and not claimed:
        return TrialSpend([], NO_MODEL, claimed)
    return TrialSpend(claimed, CLAIMED, claimed)


def trial_usage(result: TrialResult, model: str | None = None) -> list[Usage]:
    """Every model's tokens in one trial (:func:`trial_spend`)."""
    return trial_spend(result, model).usage


def trial_cost(result: TrialResult, model: str | None = None, trial_dir: Path | str | None = None) -> float | None:
    """What one trial cost at list prices; None when it used tokens of a model with no
    price, or made no model call at all (the reference agent: nothing measured, not $0)."""
    spend = trial_spend(result, model, trial_dir)
    if spend.source == NO_MODEL:
        return None
    if not spend.usage:
        return 0.0 if result.agent_result is not None or spend.source == METERED else None
    cost = cost_of(spend.usage)
    return cost.usd if cost.complete else None


# --- the ledger -------------------------------------------------------------------------


class SpendEntry(VersionedRecord):
    """One finished trial's spend: a line of ``spend.jsonl``."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    SCHEMA_ARTIFACT = "spend ledger"
    SCHEMA_REGENERATE = "move the ledger away (the study's spend is then counted from zero)"

    trial: str  # <job dir name>/<trial dir name>: unique across the study's runs and members
    member: str  # the output folder, relative to the budget folder ("." for a plain study)
    usd: float
    known: bool = Field(description="False: the trial left no usage, or a model has no price; counted as $0")
    input_tokens: int = 0
    output_tokens: int = 0
    models: list[str] = Field(default_factory=list)
    source: str = Field(default=CLAIMED, description="metered | harness claim | no model calls (reference agent)")
    usage_mismatch: str | None = Field(default=None, description="the harness's claim disagrees with the metering")
    at: float = Field(default_factory=time.time)


@dataclass
class Ledger:
    """The spend ledger of one budget folder; safe for members appending at once."""

    root: Path

    @property
    def path(self) -> Path:
        return self.root / LEDGER_FILE

    def record(self, entry: SpendEntry) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        line = entry.model_dump_json() + "\n"
        with open(self.path, "a", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def entries(self) -> dict[str, SpendEntry]:
        """The last entry of every trial (a trial seen again on resume is counted once)."""
        out: dict[str, SpendEntry] = {}
        if not self.path.is_file():
            return out
        with open(self.path, encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_SH)
            try:
                lines = fh.read().splitlines()
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = SpendEntry.model_validate_json(line)
            except ValueError:
                # A line torn by a killed writer is the last one; anything else is damage worth saying.
                log.warning("%s line %d is not a spend entry; it is skipped", self.path, n)
                continue
            out[entry.trial] = entry
        return out

    def spent(self) -> float:
        return sum(e.usd for e in self.entries().values())

    def max_trial_cost(self) -> float | None:
        known = [e.usd for e in self.entries().values() if e.known]
        return max(known) if known else None


def spend_entry(result: TrialResult, *, trial: str, member: str, model: str | None) -> SpendEntry:
    spend = trial_spend(result, model)
    usage = spend.usage
    cost = cost_of(usage) if usage else None
    return SpendEntry(
        trial=trial, member=member, usd=cost.usd if cost else 0.0,
        # A metered trial that made no call spent a measured $0.
        known=(bool(usage) and cost is not None and cost.complete) or (spend.source == METERED and not usage),
        input_tokens=sum(u.input_tokens for u in usage), output_tokens=sum(u.output_tokens for u in usage),
        models=sorted({u.model for u in usage}), source=spend.source, usage_mismatch=spend.mismatch,
    )


# --- the stop marker ----------------------------------------------------------------------


def record_cost(out: Path, spec: RunSpec) -> None:
    """Record the spend ledger as the study's cost part when it is this folder's own (a
    sweep's or design's member spends into its root's ledger) and a trial has spent into it."""
    if budget_dir(spec) == Path(out).resolve() and (Path(out) / LEDGER_FILE).is_file():
        record_part(out, "cost", SpendEntry, stage="run")


class CostStop(VersionedRecord):
    """Why a study stopped before running every trial: ``cost-stop.json`` in its output folder."""

    model_config = ConfigDict(frozen=True)
    SCHEMA_ARTIFACT = "cost stop"
    SCHEMA_REGENERATE = "re-run the study (with a higher study.max_cost_usd) or delete the file"

    cap_usd: float
    spent_usd: float
    finished: int
    total: int
    reason: str
    at: float = Field(default_factory=time.time)

    def line(self) -> str:
        return (f"stopped by study.max_cost_usd=${self.cap_usd:,.4f}: ${self.spent_usd:,.4f} spent, "
                f"{self.finished} of {self.total} trial(s) ran ({self.reason})")


def write_stop(out: Path, stop: CostStop) -> Path:
    return write_json(Path(out) / STOP_FILE, stop)


def read_stop(out: Path) -> CostStop | None:
    """The cost stop recorded in an output folder (or any member folder below it), else None."""
    out = Path(out)
    for path in [out / STOP_FILE, *sorted(out.glob(f"*/{STOP_FILE}"))]:
        if path.is_file():
            return load_model(CostStop, path.read_text(), where=path, fix=CostStop.SCHEMA_REGENERATE)
    return None


def clear_stop(out: Path) -> None:
    (Path(out) / STOP_FILE).unlink(missing_ok=True)


# --- the guard while trials run --------------------------------------------------------------


class CostCapReached(RunError):
    """The study stopped at its cost cap; the trials that finished are kept and tabled."""

    def __init__(self, stop: CostStop, job_dir: Path):
        self.stop = stop
        self.job_dir = job_dir
        super().__init__(stop.line() + "; the trials that ran are kept, tabled and reported", where=job_dir,
                         fix="raise study.max_cost_usd and re-run the same command to resume")


@dataclass
class CostGuard:
    """Holds trials at their start when the cap would be passed; records each trial's spend.

    ``unit`` is what one trial is expected to cost: the dearest of the study's finished
    trials once there is one (or the estimate, if higher). A trial starts only when the
    spend so far plus ``unit`` for it and for every trial still running stays within the
    cap; otherwise it waits for a running trial to end, and when none is running the
    study stops there. Nothing that started is cut short, so the final spend can pass
    the cap only by what the trials running at the end cost beyond ``unit`` each.
    """

    cap: float | None
    estimate_per_trial: float | None
    ledger: Ledger | None = None
    member: str = "."
    job: str = ""  # the Harbor job dir's name: with the trial's, its ledger key
    model: str | None = None
    total: int = 0
    spent: float = 0.0
    running: int = 0
    finished: list[str] = field(default_factory=list)
    tripped: str | None = None  # why the study stopped
    job_task: asyncio.Task | None = None
    _changed: asyncio.Condition | None = None

    def __post_init__(self) -> None:
        if self.ledger is not None:
            self.spent = self.ledger.spent()

    @property
    def unit(self) -> float:
        observed = self.ledger.max_trial_cost() if self.ledger is not None else None
        return max(observed or 0.0, self.estimate_per_trial or 0.0)

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    def _trip(self, reason: str) -> None:
        if self.tripped is None:
            self.tripped = reason
            log.warning("cost cap: $%.4f spent, %s; stopping the study", self.spent, reason)
            if self.job_task is not None:
                self.job_task.cancel()

    async def on_start(self, event) -> None:
        if self.cap is None:
            return
        changed = self._condition()
        async with changed:
            while True:
                if self.tripped is not None:
                    raise asyncio.CancelledError()
                if self.ledger is not None:
                    self.spent = max(self.spent, self.ledger.spent())  # members of a sweep spend at once
                projected = self.spent + (self.running + 1) * self.unit
                if projected <= self.cap:
                    self.running += 1
                    return
                if self.running == 0:
                    self._trip(f"one more trial, about ${self.unit:,.4f}, would pass it")
                    raise asyncio.CancelledError()
                await changed.wait()

    async def on_end(self, event) -> None:
        result = event.result
        entry = spend_entry(result, trial=f"{self.job}/{event.trial_name}", member=self.member, model=self.model)
        if self.ledger is not None:
            self.ledger.record(entry)
            self.spent = self.ledger.spent()
        else:
            self.spent += entry.usd
        self.finished.append(event.trial_name)
        if self.cap is None:
            return
        changed = self._condition()
        async with changed:
            self.running = max(0, self.running - 1)
            changed.notify_all()
        if self.spent > self.cap:
            self._trip("the real spend crossed it")

    def stop_record(self, total: int) -> CostStop:
        return CostStop(cap_usd=self.cap or 0.0, spent_usd=self.spent, finished=len(self.finished), total=total,
                        reason=self.tripped or "stopped")


def _usage_words(n_metered: int, n_claimed: int, n_no_model: int, n_mismatch: int, n: int) -> str:
    if n_no_model == n:
        return f"usage: {NO_MODEL}"
    parts = [f"{k} {what}" for k, what in ((n_metered, "metered"), (n_claimed, "harness claim (not metered)"),
                                           (n_no_model, NO_MODEL)) if k]
    flag = f"; {n_mismatch} usage mismatch(es) flagged" if n_mismatch else ""
    return "usage: " + (", ".join(parts) if parts else "not recorded") + flag


def _count(group, column: str, value=None) -> int:
    if column not in group:
        return 0
    col = group[column]
    return int((col == value).sum()) if value is not None else int(col.fillna(False).astype(bool).sum())


def cost_by_arm(trials, headline_lift: float | None) -> tuple[list[dict], float | None]:
    """Tokens and cost per condition (``CostRow`` dicts), and the dollars one point of lift costs.

    A point is one percentage point of the headline outcome's lift; its price is the
    extra mean cost per with-skill trial over the baseline, divided by the lift in
    points. None when a cost is unknown or the lift is not positive. Trials without a
    cost (no agent result, an unpriced model, no model call) are counted in ``n_costed``
    terms, never as $0.
    """
    rows: list[dict] = []
    means: dict[str, float] = {}
    if trials is None or len(trials) == 0 or "condition" not in trials:
        return rows, None
    for condition, group in trials.groupby("condition", sort=True):
        cost = group["cost_usd"] if "cost_usd" in group else None
        known = cost.dropna() if cost is not None else []
        counts = (_count(group, "usage_source", METERED), _count(group, "usage_source", CLAIMED),
                  _count(group, "usage_source", NO_MODEL), _count(group, "usage_mismatch"))
        row = CostRow(
            condition=str(condition), n_trials=int(len(group)),
            input_tokens=int(group["input_tokens"].fillna(0).sum()) if "input_tokens" in group else 0,
            output_tokens=int(group["output_tokens"].fillna(0).sum()) if "output_tokens" in group else 0,
            n_costed=int(len(known)), cost_usd=float(known.sum()) if len(known) else None,
            mean_cost_usd=float(known.mean()) if len(known) else None,
            n_metered=counts[0], n_claimed=counts[1], n_no_model=counts[2], n_usage_mismatch=counts[3],
            usage=_usage_words(*counts, int(len(group))),
        ).model_dump()
        rows.append(row)
        if row["mean_cost_usd"] is not None:
            means[row["condition"]] = row["mean_cost_usd"]
    per_point = None
    if headline_lift is not None and headline_lift > 0 and {"with_skill", "baseline"} <= means.keys():
        per_point = (means["with_skill"] - means["baseline"]) / (headline_lift * 100)
    return rows, per_point


def total_usage(usages: Iterable[Usage]) -> tuple[int, int]:
    """(input, output) tokens over a set of usages."""
    items = list(usages)
    return sum(u.input_tokens for u in items), sum(u.output_tokens for u in items)
