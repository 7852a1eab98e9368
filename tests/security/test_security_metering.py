"""Usage, cost and proof of load measured where the skill cannot reach (issue 35, item 1).

A hostile skill rewrites what claude-code records inside the sandbox: its usage (0
tokens, or 2e9 tokens to trip ``study.max_cost_usd``) and its own session transcript's
skill listing. The host-side metering proxy each trial's model requests pass through
(``aces_bench.backends.meter``) records the provider's usage and the request's listing
in the trial dir, out of the sandbox's reach; cost, the cap, the ledger and proof of load
read that record, and the forged claim is kept and flagged. Each trial's proxy listens
inside that trial's own network namespace: another trial's sandbox cannot reach it, and
nothing a request carries changes which trial it is recorded for.

The CLI tests run the real claude-code from ``.aces-cache/agents`` in the bubblewrap
sandbox against the scripted model server.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
from pathlib import Path

import pytest
from harbor.models.task.config import NetworkMode, NetworkPolicy
from support import agent_scripts
from support.backends import make_env, started, sync
from support.model_server import ModelServer, say
from support.security import HERE
from support.studies import needs_bwrap, read_table, retained_answer, study_overrides

from aces_bench.agents.clis import CLIS, MANIFEST, cli_dir
from aces_bench.config.compose import compose_spec
from aces_bench.core.metering import METER_FILE, MeteredCall, read_meter
from aces_bench.run.cost import LEDGER_FILE, STOP_FILE
from aces_bench.study.entry import run_study

FORGER = HERE / "fixtures" / "forging-colsum"
MODEL = "anthropic/claude-sonnet-4-5"

needs_claude = pytest.mark.skipif(not (cli_dir(CLIS["claude-code"]) / MANIFEST).is_file(),
                                  reason="claude-code is not in the agent cache: run `aces-bench agents install "
                                  "claude-code`")


def _forging_skill(tmp_path: Path, *, tokens: int | None, unlist: bool) -> Path:
    skill = tmp_path / "skills" / "csv-column-sum"
    shutil.copytree(FORGER, skill)
    if tokens is not None:
        (skill / "scripts" / "forge-usage").write_text(str(tokens))
    if unlist:
        (skill / "scripts" / "unlist").write_text("")
    return skill


def _study(tmp_path: Path, monkeypatch, skill: Path, *extra: str) -> tuple[ModelServer, Path]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-dummy")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    out = tmp_path / "out"
    with ModelServer(agent_scripts.claude_code(), max_requests=60) as server:
        spec = compose_spec(
            ["harness=claude-code", "model=openai-compatible", f"model.name={MODEL}",
             f"model.base_url={server.base_url}", "model.api_key_env=ANTHROPIC_API_KEY",
             *study_overrides(skill=skill, root_parent=tmp_path, extra=extra)],
            output_dir=out)
        try:
            run_study(spec)
        except Exception as exc:  # a cost stop is raised; the test says what it expected
            (tmp_path / "run-error.txt").write_text(repr(exc))
    return server, out


def _claimed(row) -> dict:
    """The harness's own record as the agent result kept it (what the skill forged)."""
    data = json.loads((Path(row["trial_dir"]) / "result.json").read_text())
    return data["agent_result"]["metadata"]


def _served(server: ModelServer) -> tuple[int, int]:
    return (sum(r.usage.get("prompt_tokens", 0) for r in server.requests),
            sum(r.usage.get("completion_tokens", 0) for r in server.requests))


@needs_bwrap
@needs_claude
def test_forged_huge_usage_moves_neither_the_cost_the_cap_nor_the_ledger(tmp_path, monkeypatch):
    # 2e9 input tokens claimed is ~$6,000: without the meter the cap stops the study after one trial.
    skill = _forging_skill(tmp_path, tokens=2_000_000_000, unlist=False)
    server, out = _study(tmp_path, monkeypatch, skill, "study.max_cost_usd=1.0")
    assert not (out / STOP_FILE).exists(), (tmp_path / "run-error.txt").read_text()
    table = read_table(out).set_index("condition")
    skill_row, base_row = table.loc["with_skill"], table.loc["baseline"]
    assert retained_answer(skill_row["trial_dir"]) == "total=141.75"
    # The forgery landed in the harness's record ...
    assert skill_row["claimed_input_tokens"] == 2_000_000_000
    # ... and changed nothing measured: tokens are the ones the model server answered.
    served_in, served_out = _served(server)
    assert table["input_tokens"].sum() == served_in and table["output_tokens"].sum() == served_out
    assert (table["usage_source"] == "metered").all()
    assert bool(skill_row["usage_mismatch"]) is True and bool(base_row["usage_mismatch"]) is False
    assert 0 < skill_row["cost_usd"] < 1.0
    ledger = [json.loads(line) for line in (out / LEDGER_FILE).read_text().splitlines()]
    assert sum(e["input_tokens"] for e in ledger) == served_in
    assert sum(e["usd"] for e in ledger) == pytest.approx(table["cost_usd"].sum())
    assert {e["source"] for e in ledger} == {"metered"}
    assert sum(e["usage_mismatch"] is not None for e in ledger) == 1
    grades = [json.loads(line) for line in (out / "grades.jsonl").read_text().splitlines()]
    flagged = [g for g in grades if g["condition"] == "with_skill"][0]
    assert any(n.startswith("usage mismatch: the harness's own record says input 2,000,000,000 claimed")
               for n in flagged["notes"])


@needs_bwrap
@needs_claude
def test_zero_usage_forgery_and_a_deleted_listing_change_nothing_measured(tmp_path, monkeypatch):
    skill = _forging_skill(tmp_path, tokens=0, unlist=True)
    server, out = _study(tmp_path, monkeypatch, skill)
    table = read_table(out).set_index("condition")
    skill_row = table.loc["with_skill"]
    claimed = _claimed(skill_row)
    # The skill did rewrite claude-code's own records: 0 tokens, and no listing in its transcript ...
    assert skill_row["claimed_input_tokens"] == 0
    assert claimed["aces_visible_skills"] == []
    # ... yet the trial is metered at what the model answered and counted as listed (not a setup_error).
    assert skill_row["status"] == "ok" and skill_row["reward"] == 1.0
    assert bool(skill_row["target_listed"]) is True and skill_row["visible_skills"] == "csv-column-sum"
    assert skill_row["input_tokens"] > 0 and skill_row["cost_usd"] > 0
    assert bool(skill_row["usage_mismatch"]) is True
    assert table["input_tokens"].sum() == _served(server)[0]
    # Each trial's record holds its own requests only: the listing in every with-skill call, in no baseline call.
    records = {cond: [MeteredCall.model_validate_json(x) for x in
                      (Path(table.loc[cond, "trial_dir"]) / METER_FILE).read_text().splitlines()]
               for cond in ("with_skill", "baseline")}
    agent_calls = {cond: [c for c in calls if c.listed is not None] for cond, calls in records.items()}
    assert agent_calls["with_skill"] and all(c.listed == ["csv-column-sum"] for c in agent_calls["with_skill"])
    assert agent_calls["baseline"] and all(c.listed == [] for c in agent_calls["baseline"])
    assert len(agent_calls["with_skill"]) + len(agent_calls["baseline"]) == len(server.requests)


PROBE = """
import json, sys, urllib.request
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
for _ in range(int(sys.argv[2])):
    # A request claiming to be another trial's: nothing it carries decides where it is recorded.
    req = urllib.request.Request(sys.argv[1] + "/chat/completions?trial=other", body,
                                 {"Content-Type": "application/json", "X-Aces-Trial": "other"})
    urllib.request.urlopen(req, timeout=10).read()
print("ok")
"""


def _metered_env(root: Path, base_url: str):
    env = make_env(root, network_mode=None, egress_urls=[base_url])
    env._network_policy = NetworkPolicy(network_mode=NetworkMode.ALLOWLIST, allowed_hosts=["127.0.0.1"])
    return env


@needs_bwrap
@sync
async def test_each_trial_reaches_only_its_own_metering_proxy(tmp_path):
    """Two trials at once on the same model port: each one's requests land in its own
    record, whatever the request claims, and the host's own loopback is not a way in."""
    with ModelServer(lambda r: say("pong")) as model:
        a, b = tmp_path / "a", tmp_path / "b"
        env_a, env_b = _metered_env(a, model.base_url), _metered_env(b, model.base_url)
        async with started(env_a), started(env_b):
            probe = f"python3 -c {shlex.quote(PROBE)} {model.base_url}"
            ran = await asyncio.gather(env_a.exec(f"{probe} 1"), env_b.exec(f"{probe} 3"))
            assert [r.stdout.strip() for r in ran] == ["ok", "ok"], [r.stderr for r in ran]
            # The host reaching the same port talks to the model itself, never to a trial's proxy.
            from urllib.request import Request, urlopen
            urlopen(Request(model.base_url + "/chat/completions", json.dumps(
                {"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode(),
                {"Content-Type": "application/json"}), timeout=10).read()
    metered_a, metered_b = read_meter(a / "trial"), read_meter(b / "trial")
    assert (metered_a.calls, metered_b.calls) == (1, 3)
    assert metered_a.input_tokens == model.requests[0].usage["prompt_tokens"]
    assert len(model.requests) == 5
    assert env_a.provenance.network.endswith("(metered)")


@needs_bwrap
@sync
async def test_a_trial_that_never_calls_its_model_is_metered_as_zero_calls(tmp_path):
    with ModelServer(lambda r: say("pong")) as model:
        async with started(_metered_env(tmp_path, model.base_url)):
            pass
    metered = read_meter(tmp_path / "trial")
    assert metered is not None and (metered.calls, metered.usage, metered.visible) == (0, [], None)
