"""Regenerate the golden grades of real trajectories under tests/golden/real_grades/.

    PYTHONPATH=tests .venv/bin/python tests/golden/make_real_grades.py          # re-grade the committed trajectories
    PYTHONPATH=tests .venv/bin/python tests/golden/make_real_grades.py --fetch  # also re-copy them from their sources
    PYTHONPATH=tests .venv/bin/python tests/golden/make_real_grades.py --terminus  # re-run only the terminus-2 study

One trimmed trajectory per harness, each written by the harness itself, never by
aces-bench's tests:

- gemini-cli: SkillsBench ``dapt-intrusion-detection`` (skills condition), from
  ``../shared/data/skillsbench/trials`` (``activate_skill`` calls; needs ``../shared``).
- claude-code / codex: ``tests/fixtures/trajectories/*.with_skill.json``, written by
  Harbor 0.25's installed agents for the real npm CLIs (``Skill`` and ``exec_command``
  tool calls; see that folder's README).
- reference: aces-bench's reference agent in a real offline study
  (``aces-bench 'skill.cases=[explicit-1]'``, local backend, ~10 s).
- terminus-2: Harbor's terminus-2 in a real study against the scripted loopback model
  of tests/support, summarising after its first episode, so terminus-2 itself writes
  ``trajectory.json`` with ``continued_trajectory_ref`` and ``trajectory.cont-1.json``,
  ``trajectory.cont-2.json`` plus its summarisation sub-agent files
  (``terminus_continuation.py``; local backend, ~20 s). The loader merges them: the
  expected grades are over the merged steps.

Trimming cuts strings over 1500 characters to their first 1500 with `` [...trimmed]``
(the rule of tests/fixtures/trajectories); nothing else changes. Each trajectory is
stored as ``<harness>/agent/trajectory.json`` (a trial dir, read by the real loader)
next to ``<harness>.expected.json``: the grading inputs and every deterministic
metric's score, sub-scores and evidence. ``test_golden_real_grades.py`` re-grades and
compares, so a change to tool-call parsing shows as a diff of these files. After an
intended change, run this script and commit the diff.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = HERE / "real_grades"
SHARED_TRIALS = ROOT / ".." / "shared" / "data" / "skillsbench" / "trials"
FIXTURES = ROOT / "tests" / "fixtures" / "trajectories"
CAP = 1500

# The grading inputs of each trajectory: what the trial's task said (case, skills, workdir).
CSV_SUM_CASE = {"id": "explicit-1", "kind": "explicit", "prompt": "Sum column 'amount' of data/sales.csv.",
                "expected_skill": "csv-column-sum", "expected_script": "scripts/colsum.py"}
INPUTS: dict[str, dict[str, Any]] = {
    "gemini-cli": {
        "case": {"id": "dapt-intrusion-detection", "kind": "explicit",
                 "prompt": "Analyse the packet capture and fill in network_stats.csv.",
                 "expected_skill": "pcap-analysis", "acceptable_skills": ["threat-detection"]},
        "condition": "with_skill", "target_skill": "pcap-analysis",
        "allowed_skills": ["pcap-analysis", "threat-detection"], "skills_dir": "/root/skills", "workdir": "/root",
    },
    "claude-code": {"case": CSV_SUM_CASE, "condition": "with_skill", "target_skill": "csv-column-sum",
                    "allowed_skills": ["csv-column-sum"], "skills_dir": "/skills", "workdir": "/workspace"},
    "codex": {"case": CSV_SUM_CASE, "condition": "with_skill", "target_skill": "csv-column-sum",
              "allowed_skills": ["csv-column-sum"], "skills_dir": "/skills", "workdir": "/workspace"},
}


def trim(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= CAP else value[:CAP] + " [...trimmed]"
    if isinstance(value, list):
        return [trim(v) for v in value]
    if isinstance(value, dict):
        return {k: trim(v) for k, v in value.items()}
    return value


def put(harness: str, trajectory: dict) -> None:
    """Write a trimmed trajectory: ``<harness>`` names its trial dir, or a file under OUT ending .json."""
    path = OUT / harness if harness.endswith(".json") else OUT / harness / "agent" / "trajectory.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(trim(trajectory), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def reference_study() -> tuple[dict, dict[str, Any]]:
    """Run the reference agent offline; its with_skill trajectory and grading inputs."""
    from aces_bench.records.trials import read_grades

    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        out = Path(tmp) / "study"
        subprocess.run([str(Path(sys.executable).parent / "aces-bench"), "skill.cases=[explicit-1]",
                        f"hydra.run.dir={out}"], cwd=ROOT, env=env, check=True,
                       capture_output=True, text=True)
        grades = [g for g in read_grades(out / "grades.jsonl") if g.condition == "with_skill"]
        g = grades[0]
        traj = json.loads((Path(g.trial_dir) / "agent" / "trajectory.json").read_text(encoding="utf-8"))
        meta_dir = out / "tasks" / g.task_id
        import tomllib

        aces = tomllib.loads((meta_dir / "task.toml").read_text(encoding="utf-8"))["metadata"]["aces"]
        from aces_bench.cases import load_suite

        skill_dir = ROOT / "aces_bench" / "examples" / "skills" / g.skill
        case = next(c for c in load_suite(skill_dir, g.skill).evals if c.id == g.case_id)
        inputs = {"case": case.model_dump(mode="json", exclude_defaults=True) | {"id": case.id, "prompt": case.prompt},
                  "condition": "with_skill", "target_skill": g.skill, "allowed_skills": aces["allowed_skills"],
                  "skills_dir": aces["skills_dir"], "workdir": aces["workdir"]}
        return traj, inputs


def terminus() -> None:
    from terminus_continuation import run

    agent = OUT / "terminus-2" / "agent"
    for old in agent.glob("trajectory*.json"):
        old.unlink()
    inputs = run(agent)
    for path in sorted(agent.glob("trajectory*.json")):
        put(f"terminus-2/agent/{path.name}", json.loads(path.read_text(encoding="utf-8")))
    (OUT / "terminus-2.inputs.json").write_text(json.dumps(inputs, indent=1) + "\n", encoding="utf-8")


def fetch() -> None:
    gemini = SHARED_TRIALS / "skills" / "dapt-intrusion-detection" / "agent" / "trajectory.json"
    if not gemini.is_file():
        raise SystemExit(f"{gemini}: not found; --fetch needs ../shared (the SkillsBench trials)")
    put("gemini-cli", json.loads(gemini.read_text(encoding="utf-8")))
    for harness in ("claude-code", "codex"):
        put(harness, json.loads((FIXTURES / f"{harness}.with_skill.json").read_text(encoding="utf-8")))
    traj, inputs = reference_study()
    put("reference", traj)
    (OUT / "reference.inputs.json").write_text(json.dumps(inputs, indent=1) + "\n", encoding="utf-8")
    terminus()


def inputs_of(harness: str) -> dict[str, Any]:
    if harness in ("reference", "terminus-2"):
        return json.loads((OUT / f"{harness}.inputs.json").read_text(encoding="utf-8"))
    return INPUTS[harness]


def expected(harness: str) -> dict[str, Any]:
    """Every deterministic result for one committed trajectory, as the graders give it now."""
    from support.golden import grade_committed

    return grade_committed(OUT, harness, inputs_of(harness))


def main(argv: list[str]) -> int:
    if "--fetch" in argv:
        fetch()
    elif "--terminus" in argv:
        terminus()
    for harness in ("gemini-cli", "claude-code", "codex", "reference", "terminus-2"):
        data = expected(harness)
        (OUT / f"{harness}.expected.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n",
                                                      encoding="utf-8")
        print(f"{harness}: " + ", ".join(f"{k}={v['score']}" for k, v in data["metrics"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
