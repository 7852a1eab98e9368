"""Attempts' pieces of a round: a round's Harbor job, its infrastructure reruns, the failure watch.

Attempt content is identical (a task dir is emitted once and reused), so attempts only
change how trials are scheduled, and the schedules live with the study's one round loop
(``aces_bench.study.rounds``). What this module gives that loop, per Harbor job: the job
of one attempt of some tasks (``attempt_job_config``); the rerun of a trial that failed
for infrastructure (shown: before the agent started, or a model provider's error;
``collect.classify``), at most ``study.max_infra_retries`` times per scheduled trial
(``with_infra_retries``); whatever an agent or a skill caused is its arm's failure and
never rerun (a rerun would give a flaky skill more chances than its baseline); and the
failure watch's rule (``early_stop_rule``).

pass@k over these attempts is computed once, by ``aces_bench.stats.passk``.

Layer: above ``collect`` and ``runner``, below the study's loop; the emitters know nothing of it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from harbor.models.job.config import JobConfig

from aces_bench.emitters.emit import EmitResult
from aces_bench.run.collect import TrialRecord, archive_infra_failures, classify, read_trials

SKIPPED = "skipped"


def attempt_job_config(base: JobConfig, attempt: int, task_ids: Sequence[str]) -> JobConfig:
    """The Harbor job of one attempt of ``task_ids`` (a stop-on-pass round: ``<job>-attempt<k>``)."""
    dataset = base.datasets[0].model_copy(update={"task_names": sorted(task_ids)})
    return base.model_copy(update={
        "n_attempts": 1,
        "datasets": [dataset],
        "job_name": f"{base.job_name}-attempt{attempt}",
    })


def stops_early(result) -> bool:
    """Which failures, shared by a study's first trials, stop it early: infrastructure and
    agent errors (a backend that cannot start, a CLI or endpoint that refuses every call),
    never a timeout or a verifier's verdict, which are the arm's own data."""
    return classify(result)[0] in ("infra_error", "agent_error")


def early_stop_rule(emitted: EmitResult):
    """The failure watch's rule: a failure that may stop the study (``stops_early``) and the
    arm of its trial. The watch stops only when the same failure hit both arms: a skill
    that crashes every with-skill trial is a result about that skill, not a broken setup
    (and a hostile skill must not be able to stop its own measurement)."""
    from aces_bench.core.conditions import graded_as

    sides = {t.task_id: graded_as(tp.condition) for t, tp in zip(emitted.tasks, emitted.plan.tasks, strict=True)}

    def rule(result) -> str | None:
        if not stops_early(result):
            return None
        path = result.config.task.path if result.config and result.config.task else None
        task = Path(str(path)).name if path else str(result.task_name)
        return sides.get(task.removeprefix("aces/"), "unknown")

    return rule


def retry_infra_failures(job_dir: Path) -> list[str]:
    """Remove the trial dirs of trials that failed for an infrastructure cause (``classify``),
    so that resuming runs them again (Harbor keeps any trial with a result); return their names.

    Their spend stays in the study's ledger: the money was spent.
    """
    from aces_bench.core.io import remove_tree

    dropped: list[str] = []
    for trial_dir, result in read_trials(job_dir)[0]:
        if classify(result)[0] == "infra_error":
            remove_tree(trial_dir, ignore_errors=True)
            dropped.append(trial_dir.name)
    if dropped:
        import logging

        logging.getLogger("aces_bench.run").info(
            "resuming: %d trial(s) that failed for an infrastructure cause will run again", len(dropped))
    return dropped


async def with_infra_retries(job_dir: Path, run: Callable[[], Awaitable[object]], max_retries: int,
                             attempts_per_task: dict[str, int]) -> None:
    """Run the job, then rerun (Harbor's resume) the trials shown to be infrastructure
    failures, at most ``max_retries`` times per scheduled trial (``retries.json``
    counts them); those left are collected as ``infra_error``: excluded, counted."""
    await run()
    budget = {task: n * max_retries for task, n in attempts_per_task.items()}
    for _ in range(max_retries):
        if not archive_infra_failures(job_dir, budget):
            return
        await run()


def not_run_by_cap(record: TrialRecord) -> TrialRecord:
    """A trial the cost cap kept from starting (or that it held at its start) is not run, by the cap."""
    if record.result is None and record.status in ("not_run", "infra_error"):
        return record.model_copy(update={"status": "not_run",
                                         "failure_cause": "not run: the study stopped at study.max_cost_usd"})
    return record
