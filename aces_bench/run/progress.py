"""Live trial progress: a rich display on a terminal, plain log lines otherwise.

Inside :func:`one_line` (a sequential study's rounds, a sweep's members) each job shows
one line: on a terminal a live line that is replaced, then its final state; off a
terminal one line when the job ends (failed trials are still named one by one).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from harbor.trial.hooks import TrialHookEvent

log = logging.getLogger("aces_bench.run")
_ONE_LINE: list[str] = []  # labels of the open one_line scopes, innermost last


@contextmanager
def one_line(label: str) -> Iterator[None]:
    """Every job run inside shows one progress line, ``label`` first (see the module docstring)."""
    _ONE_LINE.append(label)
    try:
        yield
    finally:
        _ONE_LINE.pop()


class TrialProgress:
    """Counts trials done, running and failed, with an ETA from the mean trial time."""

    def __init__(self, total: int, *, already_done: int = 0, already_failed: int = 0, console=None):
        from rich import get_console

        self.total = total
        self.done = already_done
        self.failed = already_failed
        self.running = 0
        self._started = time.monotonic()
        self._resumed = already_done
        # Rich's global console by default: Harbor draws its own progress bar there even
        # when quiet, and two live displays on one terminal overwrite each other's line,
        # while lives on one console nest (the first draws both).
        self._console = console or get_console()
        self._live = None
        self._is_tty = self._console.is_terminal
        self._last_line = (already_done, time.monotonic())  # off a terminal: lines are throttled
        self._label = _ONE_LINE[-1] if _ONE_LINE else None

    def __enter__(self) -> TrialProgress:
        if self._is_tty:
            from rich.live import Live

            self._live = Live(self._render(), console=self._console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        elif self._label is None:
            log.info("trials: %d in this job, %d already done, %d to run", self.total, self.done,
                     self.total - self.done)
        return self

    def __exit__(self, *exc) -> None:
        if self._live is not None:
            self._live.update(self._render())
            self._live.__exit__(*exc)
        elif self._label is not None:
            log.info("%s: trials: %d in this job, %d already done, %d to run; %s in %.0fs", self._label, self.total,
                     self._resumed, self.total - self._resumed, self.summary().rsplit(", ETA", 1)[0],
                     time.monotonic() - self._started)

    def eta_seconds(self) -> float | None:
        finished_here = self.done - self._resumed
        if finished_here <= 0:
            return None
        per_trial = (time.monotonic() - self._started) / finished_here
        return per_trial * (self.total - self.done)

    def summary(self) -> str:
        eta = self.eta_seconds()
        eta_text = f"{eta:.0f}s" if eta is not None else "?"
        return (
            f"{self.done}/{self.total} done, {self.running} running, {self.failed} failed, ETA {eta_text}"
        )

    def _render(self):
        from rich.progress_bar import ProgressBar
        from rich.table import Table

        grid = Table.grid(padding=(0, 1))
        if self._label is not None:
            grid.add_row(self._label, ProgressBar(total=max(self.total, 1), completed=self.done, width=30),
                         self.summary())
            return grid
        grid.add_row(ProgressBar(total=max(self.total, 1), completed=self.done, width=40), self.summary())
        return grid

    async def on_start(self, event: TrialHookEvent) -> None:
        self.running += 1
        self._refresh(None)

    async def on_end(self, event: TrialHookEvent) -> None:
        self.running = max(0, self.running - 1)
        self.done += 1
        result = event.result
        failed = result.exception_info is not None
        self.failed += failed
        line = f"{event.trial_name}: {'FAILED ' + result.exception_info.exception_type if failed else 'ok'}"
        self._refresh(line if failed or (self._label is None and self._due()) else None)

    def _due(self) -> bool:
        """Off a terminal, one line per 5% of the trials (or per 30 s), the last one and every failure."""
        done, at = self._last_line
        return (self.done >= self.total or self.done - done >= max(1, self.total // 20)
                or time.monotonic() - at >= 30)

    def _refresh(self, line: str | None) -> None:
        if self._live is not None:
            self._live.update(self._render(), refresh=True)
        elif line is not None:
            self._last_line = (self.done, time.monotonic())
            log.info("%s (%s)", line, self.summary())
