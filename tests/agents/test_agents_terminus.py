"""Harbor's terminus-2 through the aces-bench pipeline, driven by a scripted
OpenAI-compatible server on loopback, on the local bubblewrap backend.

The "model" reads the skill listing terminus-2 puts in its prompt, cats SKILL.md,
runs the script its Usage shows (read back from the real terminal output) and marks
the task complete; so reward 1 with the skill means the whole chain ran for real:
litellm -> terminus-2 -> tmux inside the sandbox -> the verifier -> collection -> grading.
"""

from __future__ import annotations

import logging
from pathlib import Path

from harbor.models.trajectories import Trajectory
from support.model_server import ModelServer, message_text
from support.studies import (
    needs_bwrap,
    read_table,
    retained_answer,
    study_overrides,
    wait_until_gone,
)
from support.terminus_policy import terminus_policy

from aces_bench.config.compose import compose_spec
from aces_bench.study.entry import run_study

SKILL_MD = "/skills/csv-column-sum/SKILL.md"


class _ErrorRecords(logging.Handler):
    """ERROR and worse log records, from any logger."""

    def __init__(self):
        super().__init__(level=logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")


def _conversation(server: ModelServer, *, with_skill: bool) -> list[int]:
    """Indices of the requests of one trial's conversation (told apart by the skill listing)."""
    out = []
    for i, request in enumerate(server.requests):
        first_user = next(message_text(m) for m in request.body["messages"] if m["role"] == "user")
        if ("<available_skills>" in first_user) == with_skill:
            out.append(i)
    return out


@needs_bwrap
def test_terminus2_trial_against_a_scripted_openai_compatible_server(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")  # litellm wants some key even for a keyless server
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("HARBOR_TELEMETRY", "0")
    out = tmp_path / "out"
    errors = _ErrorRecords()
    logging.getLogger().addHandler(errors)
    with ModelServer(terminus_policy, max_requests=16, idle_timeout=60) as server:
        spec = compose_spec(
            ["harness=terminus-2", "model=openai-compatible", "model.name=openai/test-model",
             f"model.base_url={server.base_url}",
             *study_overrides(root_parent=tmp_path)],
            output_dir=out,
        )
        try:
            run_study(spec)
        finally:
            logging.getLogger().removeHandler(errors)
    assert server.errors == []

    # What terminus-2 showed the model: the skill listed with its location only with the skill.
    skill_requests, base_requests = _conversation(server, with_skill=True), _conversation(server, with_skill=False)
    first_prompt = message_text(server.requests[skill_requests[0]].body["messages"][0])
    assert f"<location>{SKILL_MD}</location>" in first_prompt
    assert "Use the csv-column-sum skill to sum the amount column" in first_prompt
    # cat SKILL.md, run the script, mark complete, confirm.
    assert len(skill_requests) == 4
    # The baseline marks complete at once and confirms.
    assert len(base_requests) == 2
    assert all(r.protocol == "chat" and r.body["model"] == "test-model" for r in server.requests)

    table = read_table(out).set_index("condition")
    assert sorted(table.index) == ["baseline", "with_skill"]
    assert (table["status"] == "ok").all(), table[["status", "failure_cause"]].to_dict()
    assert (table["harness"] == "terminus-2").all() and (table["model"] == "openai/test-model").all()
    skill, base = table.loc["with_skill"], table.loc["baseline"]
    assert skill["reward"] == 1.0
    assert base["reward"] == 0.0
    # What the model was shown, read from the <available_skills> block of its first prompt.
    assert (skill["visible_skills"], bool(skill["target_listed"])) == ("csv-column-sum", True)
    assert (base["visible_skills"], bool(base["target_listed"])) == ("", False)

    # Tokens recorded are exactly what the server reported for that trial's requests.
    for row, requests in ((skill, skill_requests), (base, base_requests)):
        usages = [server.requests[i].usage for i in requests]
        assert row["input_tokens"] == sum(u["prompt_tokens"] for u in usages) > 0
        assert row["output_tokens"] == sum(u["completion_tokens"] for u in usages) > 0

    # The ATIF trajectory exists, loads with Harbor's model, and was graded.
    assert skill["has_trajectory"] and base["has_trajectory"]
    trial_dir = skill["trial_dir"]
    trajectory = Trajectory.model_validate_json(Path(trial_dir, "agent", "trajectory.json").read_text())
    assert trajectory.agent.name == "terminus-2"
    keystrokes = [str(call.arguments.get("keystrokes", "")) for step in trajectory.steps
                  for call in (step.tool_calls or [])]
    assert f"cat {SKILL_MD}\n" in keystrokes
    assert ("python3 /skills/csv-column-sum/scripts/colsum.py data/sales.csv amount > /workspace/answer.txt\n"
            in keystrokes)
    assert skill["metric_skill_execution"] == 1.0
    assert base["metric_skill_execution"] == 0.0
    assert skill["n_tool_calls"] >= 3

    # The answer really came from the sandbox's workspace, retained by the verifier.
    assert retained_answer(trial_dir) == "total=141.75"

    # conf/harness/terminus-2.yaml tells Harbor the agent has no web tools to disable:
    # no ERROR per trial for the sandbox's network being off.
    assert errors.messages == []

    # terminus-2's tmux server lived inside the sandbox and died with it.
    procs, roots = wait_until_gone(tmp_path)
    assert procs == [] and roots == []
