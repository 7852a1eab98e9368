"""Hydra callback: after a multirun, one report over every member of the sweep."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from aces_bench.errors import AcesError

log = logging.getLogger("aces_bench.sweep")


class SweepReport(Callback):
    """Builds ``<sweep dir>/report/`` from the members' stored results.

    Each member already wrote its own report; this one pairs members against each
    other (isolation vs group, decoy-set sizes, harnesses, models).
    """

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        if not config.get("report", True) or config.get("emit_only", False):
            return
        sweep_dir = Path(config.hydra.sweep.dir)
        if not any(sweep_dir.glob("*/trials.parquet")):
            log.info("sweep report: no member produced a trials table in %s", sweep_dir)
            return
        from aces_bench.reports import build_report

        try:
            index = build_report(sweep_dir)
        except AcesError as exc:
            log.error("sweep report failed: %s", exc)
            return
        log.info("sweep report: %s", index)
