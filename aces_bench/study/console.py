"""What a study prints: a quiet console, and the verdict at the end.

By default the console shows aces-bench's own lines at INFO and only warnings and
errors from libraries (Harbor logs every trial phase at DEBUG on its own loggers,
LiteLLM and httpx chatter at INFO); ``aces-bench -v`` shows everything at DEBUG. The
log file Hydra writes in the output folder keeps aces-bench's INFO lines either way.

At the end of a study (or a sweep or design) ``finish_console`` prints a compact
verdict table (skill, lift with its interval, verdict, failed/excluded trials, cost)
the report's path and, for each skill without a verdict, why and the fix; the verdict column is the report's own (``reports.verdict``,
the gate's words), read through :func:`verdict_table` so it follows the gate. Failed
trials are counted into ``STATE`` and make the command exit 1 with a line saying how
many and why (``exit_status``).
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

OWN = "aces_bench"
VERBOSE_FLAGS = ("-v", "--verbose")
# Lines that are aces-bench's own but belong in the log file, not the console.
_FILE_ONLY = ("aces_bench.backends.copyout",)


@dataclass
class ConsoleState:
    verbose: bool = False
    failed: Counter = field(default_factory=Counter)  # status -> trials, over the whole command
    causes: Counter = field(default_factory=Counter)  # first failure cause lines
    trials: int = 0
    no_verdict: list[str] = field(default_factory=list)  # skills without a verdict, over the whole command


STATE = ConsoleState()


class QuietFilter(logging.Filter):
    """Pass aces-bench's INFO and anyone's WARNING (all of it with ``-v``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if STATE.verbose:
            return True
        if record.levelno >= logging.WARNING:
            return True
        return (record.name == OWN or record.name.startswith(OWN + ".")) and record.levelno >= logging.INFO \
            and not record.name.startswith(_FILE_ONLY)


class ConsoleFormatter(logging.Formatter):
    """aces-bench's own INFO lines as plain sentences; anything louder or from a library
    with its level and logger (the log file keeps Hydra's full format)."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and STATE.verbose:
            message += "\n" + self.formatException(record.exc_info)
        own = record.name == OWN or record.name.startswith(OWN + ".")
        if own and record.levelno < logging.WARNING:
            return message
        return f"{record.levelname.lower()}: {record.name}: {message}"


def quiet_console(verbose: bool | None = None) -> None:
    """Put the filter on every handler that writes to a terminal stream (Hydra's console
    handler); with ``verbose`` the root logger goes to DEBUG instead."""
    if verbose is not None:
        STATE.verbose = verbose
    root = logging.getLogger()
    if STATE.verbose:
        root.setLevel(logging.DEBUG)
        for name in ("harbor", "LiteLLM", "httpx"):
            logging.getLogger(name).setLevel(logging.DEBUG)
    for handler in root.handlers:
        stream = getattr(handler, "stream", None)
        if isinstance(handler, logging.FileHandler) or stream not in (sys.stderr, sys.stdout):
            continue
        if not any(isinstance(f, QuietFilter) for f in handler.filters):
            handler.addFilter(QuietFilter())
        if not STATE.verbose:
            handler.setFormatter(ConsoleFormatter())


def strip_verbose(argv: list[str]) -> list[str]:
    """argv without ``-v``/``--verbose`` (recorded in ``STATE``)."""
    rest = [a for a in argv if a not in VERBOSE_FLAGS]
    if len(rest) != len(argv):
        STATE.verbose = True
    return rest


# --- the end of a study ------------------------------------------------------------------------------


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.2f}"


def verdict_table(results_dir: Path, trials=None) -> list[str]:
    """The compact verdict table of a reported study (empty without a report); a verdict resting on
    unreviewed drafts is marked in its row and explained, with the fix, in a line after the table."""
    from aces_bench.core.versioning import load_model
    from aces_bench.records.summary import ReportSummary
    from aces_bench.reports.verdict import unreviewed_notes, verdict_rows

    path = Path(results_dir) / "report" / "summary.json"
    if not path.is_file():
        return []
    summary = load_model(ReportSummary, path.read_text(), where=path, fix="rebuild it: aces-bench report <dir>")
    if trials is None:
        from aces_bench.records.trials import read_trials_table

        try:
            trials = read_trials_table(Path(results_dir))
        except Exception:  # noqa: BLE001 - the table is a convenience here; the report already read it
            trials = None
    level = int(summary.stats.settings.level * 100)
    header = ("skill", f"{summary.headline_outcome} lift [{level}% CI]", "verdict", "failed", "excluded", "cost")
    rows = [header]
    for v in verdict_rows(summary):
        r = v.row
        interval = "" if r is None or r.ci_lo is None else f" [{r.ci_lo:+.2f}, {r.ci_hi:+.2f}]"
        lift = (_fmt(r.lift) if r is not None else "n/a") + interval
        failed = excluded = 0
        cost, no_model = None, False
        if trials is not None and len(trials):
            part = trials.loc[trials["skill"].astype(str) == v.skill]
            status = part["status"].astype(str)
            capped = _by_cap(part)
            failed = int((~status.isin(["ok", "skipped"]) & ~capped).sum())
            # not run because the cost cap stopped the study, or ran but left out of the lift
            excluded = int(capped.sum()) + (int(((status == "ok") & part["outcome"].isna()).sum())
                                            if "outcome" in part else 0)
            known = part["cost_usd"].dropna() if "cost_usd" in part else []
            cost = float(known.sum()) if len(known) else None
            from aces_bench.core.metering import NO_MODEL  # the console module loads no pydantic at import

            no_model = "usage_source" in part and bool((part["usage_source"] == NO_MODEL).all())
        status = v.status + (" (unreviewed drafts)" if v.skill in summary.unreviewed_drafts else "")
        rows.append((v.skill, lift, status, str(failed), str(excluded),
                     "no model calls" if no_model else "n/a" if cost is None else f"${cost:,.4f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    table = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return table + [f"unreviewed drafts: {n}" for n in unreviewed_notes(summary)]


def _by_cap(part):
    """Rows of trials the cost cap kept from running (counted apart from failures)."""
    cause = part["failure_cause"].astype(str) if "failure_cause" in part else part["status"].astype(str)
    return (part["status"].astype(str) == "not_run") & cause.str.contains("study.max_cost_usd", regex=False)


def count_failures(trials) -> None:
    """Add a table's failed trials (any status but ok and skipped; not the trials a cost
    stop kept from running, which the stop itself reports) to ``STATE``."""
    if trials is None or not len(trials):
        return
    STATE.trials += len(trials)
    status = trials["status"].astype(str)
    bad = trials.loc[~status.isin(["ok", "skipped"]) & ~_by_cap(trials)]
    STATE.failed.update(bad["status"].astype(str))
    for cause in bad["failure_cause"].dropna().astype(str):
        STATE.causes[cause.splitlines()[0][:160]] += 1


def finish_console(results_dir: Path, trials=None, index: Path | None = None, *, count: bool = True) -> None:
    """Print the verdict table and the report path; count the failed trials."""
    if count:
        count_failures(trials)
    lines = verdict_table(results_dir, trials) if index is not None else []
    out = sys.stdout
    if lines:
        print("", file=out)
        for line in lines:
            print(line, file=out)
    if index is not None:
        for line in no_verdict_lines(results_dir):
            print(line, file=out)
        print(f"report: {index}", file=out)
    else:
        print(f"results: {results_dir} (no report: `aces-bench report {results_dir}` builds it)", file=out)
    out.flush()


def no_verdict_lines(results_dir: Path) -> list[str]:
    """Each skill without a verdict: why, in one sentence with counts, and the fix (from summary.json)."""
    from aces_bench.records.summary import read_summary

    path = Path(results_dir) / "report" / "summary.json"
    if not path.is_file():
        return []
    lines = []
    for n in read_summary(path).no_verdict:
        STATE.no_verdict.append(n.skill)
        lines += [f"no verdict for {n.skill}: {n.reason}", f"  fix: {n.fix}"]
    return lines


def failure_line() -> str | None:
    """How many trials failed and why, in one line; None when none did."""
    n = sum(STATE.failed.values())
    if not n:
        return None
    by = ", ".join(f"{k} {v}" for k, v in STATE.failed.most_common())
    top = "; ".join(f"{c} (x{k})" for c, k in STATE.causes.most_common(2))
    return f"{n} of {STATE.trials} trial(s) failed ({by}): {top}"


def exit_status() -> int:
    """1 when any trial of the command failed (after printing why), else 0."""
    line = failure_line()
    if line is None:
        return 0
    print(f"error: {line}", file=sys.stderr)
    print("  fix: see each trial's failure_cause in trials.csv; re-running the same command retries "
          "infrastructure failures", file=sys.stderr)
    return 1


NO_VERDICT_EXIT = 3


def no_verdict_status() -> int:
    """3 (``aces-bench eval``) when a skill got no verdict, after saying how many; else 0."""
    if not STATE.no_verdict:
        return 0
    skills = sorted(set(STATE.no_verdict))
    print(f"error: {len(skills)} skill(s) got no verdict ({', '.join(skills)}); why and the fix are above",
          file=sys.stderr)
    return NO_VERDICT_EXIT
