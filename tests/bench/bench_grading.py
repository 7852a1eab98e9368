"""Speed target of the deterministic grading layer. Run: PYTHONPATH=tests .venv/bin/python tests/bench/bench_grading.py

2,022 synthetic trajectories shaped like the ACES study's (14,335 steps, 11,642 tool
calls: ~7 steps and ~6 tool calls each), with realistic outputs (file listings, CSV
heads, SKILL.md text, tracebacks, script reports), a mix of harness tool styles,
failures, retries, skill patches and the odd secret. Target: security,
skill_execution and skill_efficiency (plus self_correction) for all of them in
under 5 s on 2 cores. Parsing JSON into Harbor's ``Trajectory`` is timed apart.
"""

from __future__ import annotations

import json
import random
import time

from harbor.models.trajectories import Trajectory
from support.graders import bash, case, tool, traj_dict

from aces_bench.graders.base import GradingInput
from aces_bench.graders.deterministic import grade_deterministic
from aces_bench.graders.patterns import load_patterns

N = 2022
TARGET_S = 5.0
SKILLS = [f"skill-{i:02d}" for i in range(20)]


def _csv(rng: random.Random, rows: int) -> str:
    lines = ["invoice_id,date,vendor,amount,currency,status"]
    for _ in range(rows):
        lines.append(f"INV-{rng.randint(1000, 9999)},2026-03-{rng.randint(1, 28):02d},Vendor {rng.randint(1, 40)},"
                     f"{rng.uniform(10, 5000):.2f},EUR,{rng.choice(['paid', 'open', 'void'])}")
    return "\n".join(lines)


def _skill_md(skill: str) -> str:
    body = ("## When to use\nUse this skill when the user asks to reconcile invoices against a ledger.\n\n"
            "## Steps\n1. Run `python3 scripts/run.py <csv>`.\n2. Check the totals it prints.\n"
            "3. Write the reconciled total to the answer file.\n\n## Limitations\nCSV input only; "
            "amounts in one currency.\n") * 3
    return f"---\nname: {skill}\ndescription: Reconciles invoices for the finance team.\n---\n{body}"


def _traceback() -> str:
    return ('Traceback (most recent call last):\n  File "/skills/x/scripts/run.py", line 42, in <module>\n'
            '    main(sys.argv[1])\n  File "/skills/x/scripts/run.py", line 31, in main\n'
            "    total += float(row['Amount'])\nKeyError: 'Amount'")


def one_trajectory(i: int, rng: random.Random) -> tuple[dict, str, str]:
    skill = SKILLS[i % len(SKILLS)]
    with_skill = i % 2 == 0
    md = f"/skills/{skill}/SKILL.md"
    run = f"python3 /skills/{skill}/scripts/run.py /workspace/data/march.csv"
    calls = [bash("ls -la /workspace/data", "total 48\n" + "\n".join(
        f"-rw-r--r-- 1 root root {rng.randint(100, 90000)} Mar 3 10:0{k} file_{k}.csv" for k in range(8)))]
    if with_skill:
        style = i % 3
        if style == 0:
            calls.append(bash(f"cat {md}", _skill_md(skill)))
        elif style == 1:
            calls.append(tool("activate_skill", {"name": skill}, _skill_md(skill)))
        else:
            calls.append(tool("read_file", {"file_path": md}, _skill_md(skill)))
        if rng.random() < 0.25:
            calls.append(bash(run, _traceback(), 1))
            if rng.random() < 0.5:
                calls.append(bash(f"sed -i 's/Amount/amount/' /skills/{skill}/scripts/run.py", ""))
        calls.append(bash(run, "Reconciled 41 of 41 rows\n" + _csv(rng, 15) + "\nTOTAL 1234.50 EUR"))
    else:
        calls.append(bash("head -n 20 /workspace/data/march.csv", _csv(rng, 20)))
        calls.append(tool("write_file", {"file_path": "/workspace/solve.py",
                                         "content": "import csv\n" * 20 + "print(sum(...))\n"}, "ok"))
        calls.append(bash("python3 /workspace/solve.py", "1234.5" if rng.random() < 0.7 else _traceback(),
                          0 if rng.random() < 0.7 else 1))
    if rng.random() < 0.15:
        calls.append(bash("pip install pandas", "Collecting pandas\n  Downloading pandas-2.2.0.whl (12.1 MB)\n"
                                                "Successfully installed pandas-2.2.0"))
    if rng.random() < 0.05:
        calls.append(bash("cat .env", "DB_HOST=localhost\nAPI_KEY=sk-proj-" + "Zx9" * 10))
    while len(calls) < 6:
        calls.append(bash("cat /workspace/answer.txt", "1234.50"))
    calls.append(bash("echo 1234.50 > /workspace/answer.txt", ""))
    # ~7 steps: some steps carry two calls, as harnesses batch them.
    d = traj_dict(*calls, per_step=2 if len(calls) > 6 else 1, final="The reconciled total is 1234.50 EUR.",
                  version=rng.choice(["ATIF-v1.2", "ATIF-v1.5", "ATIF-v1.6", "ATIF-v1.7"]))
    return d, skill, "with_skill" if with_skill else "baseline"


def main() -> int:
    rng = random.Random(7)
    raw = [one_trajectory(i, rng) for i in range(N)]
    texts = [json.dumps(d) for d, _, _ in raw]
    load_patterns()  # compile once, as a grading run does

    start = time.perf_counter()
    trajs = [Trajectory.model_validate_json(t) for t in texts]
    parse_s = time.perf_counter() - start
    steps = sum(len(t.steps) for t in trajs)
    calls = sum(len(s.tool_calls or []) for t in trajs for s in t.steps)

    inputs = [GradingInput(trajectory=t, case=case(expected_skill=skill, expected_script="scripts/run.py"),
                           condition=cond, target_skill=skill, allowed_skills=(skill,), final_answer="1234.50 EUR", skills_dir="/skills", workdir="/workspace")
              for t, (_, skill, cond) in zip(trajs, raw, strict=True)]
    start = time.perf_counter()
    results = [grade_deterministic(i, artifacts=[]) for i in inputs]
    grade_s = time.perf_counter() - start

    assert all(r["skill_execution"].scored and r["security"].scored for r in results)
    patched = sum(r["self_correction"].details["self_correction"]["patched"] for r in results)
    flagged = sum(r["security"].score < 1 for r in results)
    print(f"{N} trajectories, {steps} steps, {calls} tool calls, {sum(map(len, texts)) / 1e6:.1f} MB of JSON")
    print(f"{'parse JSON -> harbor Trajectory (not part of the target)':<62} {parse_s:7.3f} s")
    ok = "ok" if grade_s < TARGET_S else "SLOW"
    print(f"{'grade: security + skill_execution + skill_efficiency + self_corr.':<62} {grade_s:7.3f} s   "
          f"target < {TARGET_S:.1f} s   {ok}")
    print(f"throughput: {N / grade_s:,.0f} trajectories/s, {calls / grade_s:,.0f} tool calls/s "
          f"({patched} with skill patches, {flagged} with security findings)")
    return 0 if grade_s < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
