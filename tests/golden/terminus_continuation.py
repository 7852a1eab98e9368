"""A real terminus-2 trajectory with a continuation file, for the golden grades.

Harbor's terminus-2 runs through the aces-bench pipeline (local backend, csv-column-sum,
``explicit-1``) against the scripted OpenAI-compatible server of tests/support, with
proactive summarisation forced after its first episode
(``proactive_summarization_threshold`` just under the context limit litellm reports
for an unknown model) and linear history on: terminus-2 itself summarises, writes
``trajectory.json`` up to the hand-off and ``trajectory.cont-N.json`` after each one,
marking the copied steps. The
scripted model answers the three summarisation sub-agents in plain text, as a model
would, and carries the Usage line of SKILL.md in its summary.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from support.model_server import ModelServer, message_text, say

ROOT = Path(__file__).resolve().parents[2]
SKILL = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"
CONTEXT_LIMIT = 1_000_000  # litellm's fallback for a model it does not know (Harbor's LiteLLM)
_USAGE = re.compile(r"python3 (scripts/\S+\.py) <file\.csv> (\w+)")
_LOCATION = re.compile(r"<location>([^<]*/csv-column-sum/SKILL\.md)</location>")


def _reply(analysis: str, commands: list[str], *, complete: bool = False) -> str:
    return json.dumps({"analysis": analysis, "plan": "; ".join(commands) or "confirm",
                       "commands": [{"keystrokes": c + "\n", "duration": 0.3} for c in commands],
                       "task_complete": complete})


def policy(body: dict[str, Any]) -> str:
    texts = [message_text(m) for m in body.get("messages", [])]
    everything = "\n".join(texts)
    last = texts[-1] if texts else ""
    handoff = "Continue working on this task from where the previous agent left off" in last
    if not handoff and "The next agent needs to understand everything" in last:  # summarisation, step 1
        usage = _USAGE.search(everything)
        total = re.search(r"total=[\d.]+", everything)
        return ("I read /skills/csv-column-sum/SKILL.md. Its Usage section says: "
                + (f"python3 {usage.group(1)} <file.csv> {usage.group(2)}" if usage else "unknown")
                + (f". I ran it: it printed {total.group(0)} into /workspace/answer.txt; only marking the task "
                   "complete is left." if total else ". Next: run it on data/sales.csv and write /workspace/answer.txt."))
    if not handoff and "ask everything you need to know" in last:  # step 2: the new agent's questions
        return "1. Which column should be summed?\n2. Where must the answer be written?"
    if not handoff and "The next agent has a few questions for you" in last:  # step 3: the answers
        return "1. The amount column.\n2. /workspace/answer.txt."
    location = _LOCATION.search(everything)
    if location is None:  # baseline: no skill listed
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        return (_reply("No skill is listed; count the data lines.", ["wc -l < data/sales.csv > /workspace/answer.txt"],
                       complete=True) if turn == 0 else _reply("Confirming.", [], complete=True))
    usage = _USAGE.search(everything)
    skill_dir = location.group(1).rsplit("/", 1)[0]
    if re.search(r"total=\d", everything) or "Are you sure you want to mark the task as complete" in last:
        return _reply("The answer file holds the total.", [], complete=True)
    if usage is None:
        return _reply("The csv-column-sum skill is available; read it first.", [f"cat {location.group(1)}"])
    script, column = usage.groups()
    return _reply("SKILL.md documents its script; run it on the staged CSV.",
                  [f"python3 {skill_dir}/{script} data/sales.csv {column} > /workspace/answer.txt",
                   "cat /workspace/answer.txt"])


def run(dest: Path) -> dict[str, Any]:
    """Run the study; copy the with-skill trial's trajectory files into ``dest``; its grading inputs."""
    from aces_bench.config.compose import compose_spec
    from aces_bench.records.trials import read_grades
    from aces_bench.study.entry import run_study

    os.environ.setdefault("OPENAI_API_KEY", "sk-test-dummy")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HARBOR_TELEMETRY", "0")
    model = ModelServer(lambda request: say(policy(request.body)), max_requests=60, idle_timeout=90)
    with tempfile.TemporaryDirectory() as tmp, model as server:
        out = Path(tmp) / "out"
        spec = compose_spec([
            "harness=terminus-2", "model=openai-compatible", "model.name=openai/test-model",
            f"model.base_url={server.base_url}", "skill=custom", f"skill.paths=[{SKILL}]", "skill.cases=[explicit-1]",
            f"+backend.kwargs.root_parent={tmp}", "report=false",
            f"+harness.kwargs.proactive_summarization_threshold={CONTEXT_LIMIT - 600}",
            # Harbor writes continuation files (trajectory.cont-N.json) in linear-history mode.
            "+harness.kwargs.trajectory_config.linear_history=true",
        ], output_dir=out)
        run_study(spec)
        if server.errors:
            raise SystemExit(f"scripted server errors: {server.errors}")
        (g,) = [g for g in read_grades(out / "grades.jsonl") if g.condition == "with_skill"]
        agent = Path(g.trial_dir) / "agent"
        files = sorted(agent.glob("trajectory*.json"))
        if g.reward != 1.0:
            raise SystemExit(f"the with-skill terminus-2 trial did not pass (reward {g.reward}): {g.notes}")
        if not any(".cont-" in f.name for f in files):
            raise SystemExit(f"terminus-2 wrote no continuation file: {[f.name for f in files]}")
        dest.mkdir(parents=True, exist_ok=True)
        for f in files:
            (dest / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
        return {"case": {"id": "explicit-1", "kind": "explicit",
                         "prompt": "Use the csv-column-sum skill to sum the amount column of the CSV file.",
                         "expected_skill": "csv-column-sum", "expected_script": "scripts/colsum.py",
                         "expected_output": "total=141.75",
                         "assertions": [{"kind": "number", "value": 141.75, "tolerance": 0.001}]},
                "condition": "with_skill", "target_skill": "csv-column-sum", "allowed_skills": ["csv-column-sum"],
                "skills_dir": "/skills", "workdir": "/workspace"}


if __name__ == "__main__":
    print(json.dumps(run(Path(sys.argv[1])), indent=1))
