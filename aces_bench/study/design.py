"""A designed study: the union of several grids (``study.arms``), run as one study.

The ACES paper's design is not one Cartesian product: the primary matrix (harnesses x
workspaces), the routing stress arm (decoy-set sizes) and the same-agent model slice
each vary different things. A Hydra sweep can only take products, so a study with
``arms`` is expanded here: every arm's grid gives members (override lists), members
with the same folder name are one member (the model slice's default model is also a
primary cell), and each member runs as an ordinary study in ``<output_dir>/<member>/``.
One report then reads the union of the members' tables.
"""

from __future__ import annotations

import itertools
import logging
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from aces_bench.config.spec import RunSpec
from aces_bench.config.store import member_dirname
from aces_bench.core.errors import ConfigError, RunError
from aces_bench.core.pricing import estimate_trial
from aces_bench.core.versioning import VersionedRecord
from aces_bench.records.study import STUDY_FILE, StudyRecord, record_part
from aces_bench.records.study_data import DESIGN_FILE
from aces_bench.records.trials import StudyTrialRow
from aces_bench.run.cost import CostCapReached

log = logging.getLogger("aces_bench.design")

# Keys a member's folder name leaves out (as Hydra's sweep subdir does).
_EXCLUDE = ("study", "emit_only", "report", "skill.paths", "skill.support", "decoys.paths",
            "backend.kwargs.root_parent", "output_dir")


class Member(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    arms: tuple[str, ...]
    overrides: tuple[str, ...]


class MemberSize(BaseModel):
    name: str
    arms: list[str]
    harness: str
    model: str
    workspace_mode: str
    decoy_set: str
    n_tasks: int
    n_trials: int
    cost_usd: float | None


class DesignSize(VersionedRecord):
    """``design.json``: what the design materialised: members, task dirs, trials and cost."""

    SCHEMA_ARTIFACT: ClassVar[str] = "study design"
    SCHEMA_REGENERATE: ClassVar[str] = "re-run the study command (it resumes and rewrites design.json)"

    study: str
    n_members: int
    n_tasks: int
    n_trials: int
    n_attempts: int
    scan_tiers: list[int]
    cost_usd: float | None
    cost_basis: str
    unpriced_models: list[str]
    members: list[MemberSize]
    paper_page: bool = False
    """The study asks for the paper page (``study.paper_page``): the report reads it here."""

    def lines(self) -> list[str]:
        cost = f"${self.cost_usd:,.2f}" if self.cost_usd is not None else "unknown"
        out = [f"{self.study}: {self.n_members} members, {self.n_tasks} task dirs, {self.n_trials} trials "
               f"({self.n_attempts} attempt(s) per task), estimated model cost {cost}"]
        out.append(f"  cost basis: {self.cost_basis}")
        if self.unpriced_models:
            out.append(f"  not priced (no price known): {', '.join(self.unpriced_models)}")
        if self.scan_tiers:
            out.append(f"  static scan tiers: {', '.join(map(str, self.scan_tiers))}")
        return out


def _cells(value: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError as exc:
        raise ConfigError(f"cannot split the arm override {value!r}: {exc}", where="study.arms",
                          fix="quote values with spaces once, e.g. \"study.description='a b'\"") from None


def expand(spec: RunSpec) -> list[Member]:
    """The design's members in arm order; a member in several arms is listed once."""
    members: dict[str, Member] = {}
    for arm in spec.study.arms:
        fixed = [o for text in arm.overrides for o in _cells(text)]
        keys = list(arm.grid)
        for key in keys:
            if not arm.grid[key]:
                raise ConfigError(f"arm {arm.name!r} sweeps {key} over no values", where=f"study.arms.{arm.name}",
                                  fix=f"give {key} at least one value, or drop it from the grid")
        for combo in itertools.product(*(arm.grid[k] for k in keys)):
            # Grid key "overrides": each value is a whole override list (e.g. "model=gpt-4o").
            cell = [*fixed, *(o for k, v in zip(keys, combo, strict=True)
                              for o in (_cells(v) if k == "overrides" else [f"{k}={v}"]))]
            sets_model = any(o.split("=", 1)[0].lstrip("+~") in ("model", "model.name") for o in cell)
            harness = next((o.split("=", 1)[1] for o in reversed(cell) if o.startswith("harness=")), None)
            if not sets_model and harness in spec.study.harness_models:
                cell.append(f"model={spec.study.harness_models[harness]}")
            name = member_dirname(cell, _EXCLUDE)
            if name in members:
                old = members[name]
                members[name] = old.model_copy(update={"arms": tuple(dict.fromkeys((*old.arms, arm.name)))})
            else:
                members[name] = Member(name=name, arms=(arm.name,), overrides=tuple(cell))
    return list(members.values())


def member_spec(spec: RunSpec, member: Member, out: Path) -> RunSpec:
    """The member's own RunSpec: the command line's overrides (as the user gave them,
    recorded in ``spec.overrides``), then the member's, composed by Hydra like the
    design itself. Called for every member by ``compose_members`` before anything runs."""
    from aces_bench.config.compose import compose_spec

    base = [o for o in spec.overrides if not o.startswith("output_dir=")]
    overrides = [*base, *member.overrides, "study.arms=[]", f"study.name={spec.study.name}"]
    member_spec = compose_spec(overrides, output_dir=out / member.name)
    # Every member's spend goes to the design's one ledger, so the cap is the design's.
    return member_spec.model_copy(update={"report": False, "budget_dir": out})


def member_cost(ms: RunSpec, n_trials: int) -> float | None:
    """A member's estimated model cost: the one price function and token estimate
    (``aces_bench.core.pricing``), $0 for a harness that calls no model, None when unpriced."""
    if not ms.harness.requires_model:
        return 0.0
    per = estimate_trial(ms.model.name, ms.study.expected_input_tokens, ms.study.expected_output_tokens)
    return None if per is None else n_trials * per


def size_of(spec: RunSpec, members: Sequence[tuple[Member, RunSpec, int]]) -> DesignSize:
    """Size and estimated cost of the emitted design (``n_tasks`` per member given)."""
    rows, unpriced, total, priced_any = [], set(), 0.0, False
    for member, ms, n_tasks in members:
        n_trials = n_tasks * ms.study.n_attempts
        cost = member_cost(ms, n_trials)
        if cost is None:
            unpriced.add(ms.model.name or "?")
        elif ms.harness.requires_model:
            total += cost
            priced_any = True
        rows.append(MemberSize(name=member.name, arms=list(member.arms), harness=ms.harness.name,
                               model=ms.model.display, workspace_mode=ms.workspace.mode, decoy_set=ms.decoys.name
                               if ms.workspace.mode == "group" else "none", n_tasks=n_tasks, n_trials=n_trials,
                               cost_usd=cost))
    s = spec.study
    basis = (f"{s.expected_input_tokens:,} input + {s.expected_output_tokens:,} output tokens per model-driven trial "
             f"(study.expected_input_tokens/expected_output_tokens) at litellm's list prices; "
             "the reference agent costs nothing")
    return DesignSize(study=spec.study.name, n_members=len(rows), n_tasks=sum(r.n_tasks for r in rows),
                      n_trials=sum(r.n_trials for r in rows), n_attempts=spec.study.n_attempts,
                      scan_tiers=list(spec.study.scan_tiers), cost_usd=total if priced_any or not unpriced else None,
                      cost_basis=basis, unpriced_models=sorted(unpriced), members=rows,
                      paper_page=s.paper_page)


def _identity(spec: RunSpec) -> str:
    return spec.model_dump_json(exclude={"output_dir", "overrides", "choices"})


def compose_members(spec: RunSpec) -> dict[str, tuple[Member, RunSpec]]:
    """Every member of the design with its own RunSpec, composed once, up front: the study
    entry (``study/entry.py``) calls it before anything of the study is emitted or run, so
    no spec is composed again while members run and a bad member stops the design before
    its first trial."""
    out = Path(spec.output_dir).resolve()
    members = expand(spec)
    if not members:
        raise ConfigError("study.arms gives no member", where="study.arms", fix="give each arm a non-empty grid")
    specs: dict[str, tuple[Member, RunSpec]] = {}
    for member in members:
        ms = member_spec(spec, member, out)
        # Two cells of one configuration (the model slice's default model is a primary
        # cell) are one member: their trials would otherwise be counted twice.
        same = next((k for k, (_, other) in specs.items() if _identity(other) == _identity(ms)), None)
        if same is None:
            specs[member.name] = (member, ms)
        else:
            first, fs = specs[same]
            arms = tuple(dict.fromkeys((*first.arms, *member.arms)))  # one arm named once
            specs[same] = (first.model_copy(update={"arms": arms}), fs)
    return specs


def run_design(spec: RunSpec, specs: dict[str, tuple[Member, RunSpec]]) -> Path:
    """Run (or, with ``emit_only``, emit) every member of ``specs`` (``compose_members``,
    which the study entry called once); then one report over them all.

    Writes ``design.json`` (members, sizes, cost estimate) and prints the size lines.
    """
    from aces_bench.study.pipeline import prepare_all, run_member

    out = Path(spec.output_dir).resolve()
    # Every member planned and through its preflight before the first one runs, the whole
    # design's cost checked from those plans, every problem listed together.
    budget = None if spec.emit_only else lambda planned: check_design_budget(spec, out, planned)
    prepared = prepare_all([ms for _, ms in specs.values()], budget)
    ran: list[tuple[Member, RunSpec, int]] = []
    stopped: CostCapReached | None = None
    for i, ((member, ms), ready) in enumerate(zip(specs.values(), prepared, strict=True), start=1):
        log.info("design member %d/%d: %s (%s)", i, len(specs), member.name, ", ".join(member.arms))
        try:
            _, n_tasks = run_member(ms, ready)
        except CostCapReached as exc:
            # The members that ran, and the finished trials of the one the cap stopped, are
            # tabled and reported together, each in its arm (design.json places them: without
            # it every member would read as the primary arm), marked as stopped by the cap.
            stopped, n_tasks = exc, len(ready.plan.tasks)
        _record_member(out, member.name)
        ran.append((member, ms, n_tasks))
        if stopped is not None:
            break
    size = size_of(spec, ran)
    _write_design(out, size)
    if stopped is None:
        for line in size.lines():
            print(line)
    tabled = not spec.emit_only and _write_study_table(out)
    if spec.report and not spec.emit_only and (stopped is None or tabled):
        from aces_bench.analysis import build_report

        index = build_report(out)  # records its statistics part at the design's root
        if stopped is None:
            from aces_bench.study.console import finish_console

            log.info("the paper's figures beside this study's: %s", index.parent / "paper.html")
            finish_console(out, index=index, count=False)  # the members counted their failed trials
    if stopped is not None:
        raise stopped
    return out


def _record_member(out: Path, name: str) -> None:
    """Record a member that ran (or was stopped) as a part of the design, by its own record."""
    if (out / name / STUDY_FILE).is_file():  # a member stopped before it began has none
        record_part(out, f"member:{name}", StudyRecord, stage="design")


def _write_design(out: Path, size: DesignSize) -> None:
    """``design.json`` and, when the members spend into it, the root's spend ledger, recorded."""
    from aces_bench.core.io import write_json
    from aces_bench.run.cost import LEDGER_FILE, SpendEntry

    write_json(out / DESIGN_FILE, size)
    record_part(out, "design", DesignSize, stage="design")
    if (out / LEDGER_FILE).is_file():
        record_part(out, "cost", SpendEntry, stage="run")


def _write_study_table(out: Path) -> bool:
    """The study-level trials table at the design's root: every member listed in
    design.json that has a table, with its arm. False when none has one yet."""
    from aces_bench.records.study_data import read_design, write_study_table
    from aces_bench.records.trials import TABLE_PARQUET

    if not any((out / m.name / TABLE_PARQUET).is_file() for m in read_design(out / DESIGN_FILE)):
        return False
    # One table of every member's trials with its arm: pd.read_parquet(<out>/trials.parquet).
    table, _ = write_study_table(out)
    record_part(out, "trials", StudyTrialRow, stage="design")
    record_part(out, "trials_csv", StudyTrialRow, stage="design")
    log.info("study trials table (every member, with arm and member): %s", table)
    return True


def planned_trials(ms: RunSpec) -> int:
    """How many trials a member will run: its planned task dirs x attempts (nothing is emitted)."""
    from aces_bench.emitters.plan import plan_study

    return len(plan_study(ms).tasks) * ms.study.n_attempts


def check_design_budget(spec: RunSpec, out: Path, members: Sequence[tuple[RunSpec, int]]) -> None:
    """Print the whole design's estimate and refuse it when, with what the study already
    spent (its ledger), it is above ``study.max_cost_usd``: before any member runs.
    ``members``: each member's spec and its planned trials."""
    check_budget("design", spec.study.name, members, out, spec.study.max_cost_usd,
                 "shrink the design (study.axes, skill.cases, study.n_attempts)")


def check_budget(kind: str, label: str, members: Sequence[tuple[RunSpec, int]], ledger_dir: Path,
                 cap: float | None, shrink: str) -> None:
    """A design's or a sweep's budget check (``kind``): print every member's estimate
    together, then refuse when ``cap`` is set and either a member's model has no price
    (nothing to cap) or the estimate on top of what ``ledger_dir``'s ledger already spent is
    above it. ``members``: each member's spec and planned trials; ``shrink`` is the fix's
    second half: how to make the study smaller."""
    from aces_bench.run.cost import Ledger

    trials, cost, unpriced = 0, 0.0, set()
    for ms, n in members:
        trials += n
        c = member_cost(ms, n)
        if c is None:
            unpriced.add(ms.model.name or "?")
        else:
            cost += c
    spent = Ledger(ledger_dir).spent()
    known = f"${cost:,.4f}" + (f" + unpriced ({', '.join(sorted(unpriced))})" if unpriced else "")
    print(f"{label}: {len(members)} members, {trials} trials, estimated model cost {known}"
          + (f"; already spent ${spent:,.4f}" if spent else ""), file=sys.stderr)
    if cap is None:
        return
    if unpriced:
        raise ConfigError(f"study.max_cost_usd={cap} is set but {', '.join(sorted(unpriced))} has no price in "
                          f"litellm's cost map, so the {kind}'s cost cannot be capped", where="study.max_cost_usd",
                          fix="drop the cap, or use priced litellm model names")
    if spent + cost > cap:
        raise RunError(f"the {kind}'s estimated cost ${cost:,.4f} ({trials} trials, {len(members)} members)"
                       + (f" on top of ${spent:,.4f} already spent" if spent else "")
                       + f" is above study.max_cost_usd=${cap:,.4f}", where="study.max_cost_usd",
                       fix=f"raise study.max_cost_usd, or {shrink}")
