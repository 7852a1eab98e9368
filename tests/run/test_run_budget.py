"""The study-wide cost cap: one ledger per study (sweep, design), a guard that holds trials,
and the totals a sweep and a design print and refuse on before any member runs."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from types import SimpleNamespace

import pytest
from support.studies import FIXTURE_SKILL, run_cli

from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import RunError
from aces_bench.core.pricing import DEFAULT_INPUT_TOKENS, DEFAULT_OUTPUT_TOKENS, estimate_trial, price_of
from aces_bench.run.cost import CostGuard, Ledger, SpendEntry
from aces_bench.study.design import check_design_budget, member_cost, planned_trials
from aces_bench.study.sweep import sweep_budget, sweep_members

GPT4O = price_of("gpt-4o")


_APPEND = """
import sys
from pathlib import Path
from aces_bench.run.cost import Ledger, SpendEntry
ledger = Ledger(Path(sys.argv[1]))
for i in range(50):
    ledger.record(SpendEntry(trial=f"job/w{sys.argv[2]}-{i}", member="m" + sys.argv[2], usd=0.01, known=True))
"""


def test_members_appending_at_once_lose_nothing(tmp_path):
    """Four processes (a parallel sweep's members) append to one ledger at once."""
    procs = [subprocess.Popen([sys.executable, "-c", _APPEND, str(tmp_path), str(w)]) for w in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    ledger = Ledger(tmp_path)
    assert len(ledger.entries()) == 200
    assert ledger.spent() == pytest.approx(2.0)
    # the same trial recorded again (a resume) counts once
    ledger.record(SpendEntry(trial="job/w0-0", member="m0", usd=0.01, known=True))
    assert ledger.spent() == pytest.approx(2.0)


def _ended(name: str, usd: float):
    tokens = round(usd / GPT4O.input)
    meta = {"aces_usage": [{"model": "gpt-4o", "input_tokens": tokens, "output_tokens": 0}]}
    return SimpleNamespace(trial_name=name, result=SimpleNamespace(agent_result=SimpleNamespace(
        metadata=meta, model_usage=None, n_input_tokens=tokens, n_output_tokens=0)))


def test_a_trial_is_held_at_its_start_until_the_cap_allows_it(tmp_path):
    """cap $1, each trial expected at $0.40: two start, the third waits for them, the
    fourth would pass the cap when nothing else runs: the study stops there, under the cap."""
    guard = CostGuard(1.0, 0.4, ledger=Ledger(tmp_path), job="job")
    log: list[str] = []

    async def trial(name: str, cost: float, after: asyncio.Event | None = None, done: asyncio.Event | None = None):
        if after is not None:
            await after.wait()
        await guard.on_start(SimpleNamespace(trial_name=name))
        log.append(f"start {name}")
        await asyncio.sleep(0.01)
        await guard.on_end(_ended(name, cost))
        log.append(f"end {name}")
        if done is not None:
            done.set()

    async def main():
        guard.job_task = asyncio.current_task()
        two = asyncio.Event()
        tasks = [asyncio.create_task(trial("t1", 0.30)), asyncio.create_task(trial("t2", 0.30, done=two)),
                 asyncio.create_task(trial("t3", 0.35)), asyncio.create_task(trial("t4", 0.30, after=two))]
        try:
            await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            pass

    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        pass
    assert log[:4] == ["start t1", "start t2", "end t1", "end t2"]  # t3 held until both ended
    assert "start t3" in log and "start t4" not in log
    assert guard.tripped is not None and "one more trial" in guard.tripped
    assert guard.spent == pytest.approx(0.95) and guard.spent <= 1.0
    assert Ledger(tmp_path).spent() == pytest.approx(0.95)


def test_one_token_estimate_for_the_preview_the_design_and_the_cap(tmp_path):
    spec = compose_spec(["harness=terminus-2", "model=gpt-4o"], output_dir=tmp_path)
    assert (spec.study.expected_input_tokens, spec.study.expected_output_tokens) == (DEFAULT_INPUT_TOKENS,
                                                                                     DEFAULT_OUTPUT_TOKENS)
    per_trial = estimate_trial("openai/gpt-4o")
    assert per_trial == pytest.approx(DEFAULT_INPUT_TOKENS * GPT4O.input + DEFAULT_OUTPUT_TOKENS * GPT4O.output)
    assert member_cost(spec, 10) == pytest.approx(10 * per_trial)
    from aces_bench.run.cost import estimate

    assert estimate(spec, 10).usd == pytest.approx(10 * per_trial)
    reference = compose_spec([], output_dir=tmp_path)
    assert member_cost(reference, 10) == 0.0
    assert estimate(reference, 10).summary(None) == "study: 10 trial(s) to run; usage: no model calls " \
                                                     "(reference agent)"


def test_a_sweep_says_its_total_and_refuses_it_above_the_cap(tmp_path, capsys):
    overrides = ["harness=reference,terminus-2", "model=gpt-4o", "skill=custom", f"skill.paths=[{FIXTURE_SKILL}]",
                 "study.expected_input_tokens=1000", "study.expected_output_tokens=100"]
    assert [m[0] for m in sweep_members(overrides)] == ["harness=reference", "harness=terminus-2"]
    terminus = compose_spec(["harness=terminus-2", *overrides[1:]], output_dir=tmp_path)
    total = member_cost(terminus, planned_trials(terminus))
    sweep_budget(tmp_path, [*overrides, f"study.max_cost_usd={total * 1.01}"])
    assert capsys.readouterr().err.startswith(f"sweep: 2 members, {2 * planned_trials(terminus)} trials, "
                                              f"estimated model cost ${total:,.4f}")
    Ledger(tmp_path).record(SpendEntry(trial="j/t", member="m", usd=total * 0.02, known=True))
    with pytest.raises(RunError) as err:  # what the sweep already spent counts
        sweep_budget(tmp_path, [*overrides, f"study.max_cost_usd={total * 1.01}"])
    assert "the sweep's estimated cost" in str(err.value) and "already spent" in str(err.value)


def test_a_capped_sweep_above_its_total_runs_no_member(tmp_path):
    sweep = tmp_path / "multirun"
    proc = run_cli("-m", "harness=reference,terminus-2", "model=gpt-4o", "skill=custom",
                   f"skill.paths=[{FIXTURE_SKILL}]", "study.max_cost_usd=0.01", f"hydra.sweep.dir={sweep}",
                   env={"OPENAI_API_KEY": "sk-test"}, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "sweep: 2 members," in proc.stderr
    assert "error: study.max_cost_usd: the sweep's estimated cost $" in proc.stderr
    assert not list(sweep.glob("*/tasks"))


def test_a_design_says_its_total_and_refuses_it_above_the_cap(tmp_path, capsys):
    spec = compose_spec(["harness=terminus-2", "model=gpt-4o", "skill=custom", f"skill.paths=[{FIXTURE_SKILL}]",
                         "study.max_cost_usd=0.05"], output_dir=tmp_path)
    # Each member's spec and planned trials, as the design counts them from its preflight's plans.
    members = [(spec, planned_trials(spec)), (spec, planned_trials(spec))]
    with pytest.raises(RunError, match=r"the design's estimated cost \$[\d.]+ \(\d+ trials, 2 members\) is above "
                                       r"study.max_cost_usd=\$0\.0500"):
        check_design_budget(spec, tmp_path, members)
    assert capsys.readouterr().err.startswith(f"{spec.study.name}: 2 members, ")
