"""Hydra callbacks of a multirun: the sweep's budget before it, one report over it after.

Before any member runs, the sweep's members are expanded exactly as Hydra's basic
sweeper expands them, each is planned (nothing emitted), and the sweep's total
estimate is printed; with ``study.max_cost_usd`` set, a total (plus what the sweep's
ledger already holds) above the cap refuses the sweep. After the last member, one
report over every member, the compact verdict table and the failed trials.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from aces_bench.core.errors import AcesError

log = logging.getLogger("aces_bench.sweep")

REFUSAL = ".aces-sweep-refused.json"


def refusal(sweep_dir: Path):
    """The error that refused this sweep before it started (members raise it at once), else None.

    Hydra turns an exception raised in a callback into a warning and runs the members
    anyway, so the refusal is left in the sweep folder for each member to find (a
    launcher may run members in other processes).
    """
    import json

    from aces_bench.core.errors import RunError

    path = Path(sweep_dir) / REFUSAL
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    return RunError(data["message"], where=data.get("where"), fix=data.get("fix"))


def sweep_members(task_overrides: list[str]) -> list[list[str]]:
    """The override list of every member of a sweep, as Hydra's basic sweeper expands it."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(overrides=list(task_overrides))
    batches = BasicSweeper.split_arguments(parsed, max_batch_size=None)
    return [list(member) for batch in batches for member in batch]


def sweep_budget(sweep_dir: Path, task_overrides: list[str]) -> None:
    """Print the sweep's total estimate; refuse it above ``study.max_cost_usd`` (with the ledger)."""
    from aces_bench.config.compose import compose_spec
    from aces_bench.study.design import check_budget, planned_trials

    specs = [compose_spec(overrides, output_dir=sweep_dir / "_budget") for overrides in sweep_members(task_overrides)]
    cap = next((s.study.max_cost_usd for s in specs if s.study.max_cost_usd is not None), None)
    check_budget("sweep", "sweep", [(s, planned_trials(s)) for s in specs], sweep_dir, cap, "sweep fewer values / cases (skill.cases, study.n_attempts)")


class SweepReport(Callback):
    """The sweep's budget check before it; ``<sweep dir>/report/`` and the verdict after it.

    Each member already wrote its own report; this one pairs members against each
    other (isolation vs group, decoy-set sizes, harnesses, models).
    """

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        import json

        sweep_dir = Path(config.hydra.sweep.dir).resolve()
        (sweep_dir / REFUSAL).unlink(missing_ok=True)
        if config.get("emit_only", False):
            return
        try:
            sweep_budget(sweep_dir, list(config.hydra.overrides.task))
        except AcesError as exc:
            sweep_dir.mkdir(parents=True, exist_ok=True)
            (sweep_dir / REFUSAL).write_text(json.dumps({"message": exc.message, "where": exc.where, "fix": exc.fix}))

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from aces_bench.records.trials import read_trials_table
        from aces_bench.study.console import STATE, count_failures, finish_console

        if config.get("emit_only", False):
            return
        sweep_dir = Path(config.hydra.sweep.dir)
        members = sorted(p.parent for p in sweep_dir.glob("*/trials.parquet"))
        if not members:
            log.info("sweep report: no member produced a trials table in %s", sweep_dir)
            return
        # Count from the tables on disk: a launcher may have run members in other processes.
        STATE.failed.clear()
        STATE.causes.clear()
        STATE.trials = 0
        for member in members:
            try:
                count_failures(read_trials_table(member))
            except AcesError as exc:
                log.warning("sweep: %s", exc)
        index = None
        if config.get("report", True):
            from aces_bench.analysis import build_report

            try:
                index = build_report(sweep_dir)
            except AcesError as exc:
                log.error("sweep report failed: %s", exc)
        finish_console(sweep_dir, index=index, count=False)
