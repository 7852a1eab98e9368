"""Emitter timings at paper scale, each printed next to its target.

Run: .venv/bin/python tests/bench/bench_emit.py [--skills 64]

The matrix is 64 skills x 4 harnesses x 4 cases x 2 attempts x 2 conditions x 2
workspace modes = 8,192 trials. What is emitted and what is reused:

- harness: each harness is its own sweep member with its own output dir, so each
  member emits its own task dirs (as ``run_study`` does): 8 members (4 harnesses x 2
  workspace modes) x 512 tasks (64 skills x 4 cases x 2 conditions) = 4,096 dirs;
- attempt: never a dir of its own: Harbor runs ``n_attempts`` trials of one task dir;
- content: a harness does not change a task, so the 4,096 dirs hold 1,024 distinct
  contents (the task ids repeat across harness members).

Targets (2 cores): first emit of the whole matrix < 20 s; re-emit unchanged < 2 s
(Harbor's Task loader validates every distinct dir written, once on the machine: a task
id is a content address, and the ids accepted are recorded where every worker reads
them; an unchanged re-emit renders no task: each tasks folder maps a hash of every
input of a task to its id, and relies on the validated index written after validation).
Each run starts cold: the process's memory of validated ids and loaded skills is
cleared, and the first emit records accepted ids in a new, empty folder.
The machine is shared, so wall time rises with load: CPU time (this process and its
workers) and the load average are printed beside it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("HARBOR_TELEMETRY", "0")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from aces_bench.config.compose import compose_spec  # noqa: E402
from aces_bench.emitters import emit_study  # noqa: E402
from aces_bench.emitters.accepted import CACHE_ENV  # noqa: E402
from aces_bench.emitters.emit import forget_accepted  # noqa: E402
from aces_bench.emitters.plan import plan_study  # noqa: E402

HARNESSES = (["harness=reference"], ["harness=terminus-2", "model=gpt-4o"], ["harness=claude-code", "model=claude-sonnet", "backend=docker"],
             ["harness=codex", "model=gpt-4o", "backend=docker"])
MODES = (["workspace=isolation"], ["workspace=group", "decoys=paper"])
SCRIPT = """#!/usr/bin/env python3
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"total={{sum(float(r['{col}']) for r in rows):.2f}}")
"""


def make_skill(root: Path, i: int) -> None:
    """One small but complete skill: SKILL.md, a script, a fixture, four cases."""
    name = f"synth-skill-{i:02d}"
    col = f"col{i}"
    d = root / name
    (d / "scripts").mkdir(parents=True)
    (d / "evals" / "files").mkdir(parents=True)
    (d / "references").mkdir()
    (d / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Sum the {col} column of a CSV file number {i}.\nversion: 1.{i}.0\n---\n\n"
        f"# {name}\n\n## Usage\n```bash\npython3 scripts/sum.py <input.csv>\n```\n"
    )
    (d / "scripts" / "sum.py").write_text(SCRIPT.format(col=col))
    (d / "references" / "notes.md").write_text(f"Column {col} holds amounts in cents.\n" * 20)
    (d / "evals" / "files" / "data.csv").write_text(f"id,{col}\n" + "".join(f"{k},{k * i}.5\n" for k in range(50)))
    total = sum(k * i + 0.5 for k in range(50))
    cases = [
        {"id": kind, "kind": kind, "prompt": f"{kind}: sum the {col} column of data/data.csv.",
         "files": ["evals/files/data.csv"], "assertions": [{"kind": "number", "value": total, "tolerance": 0.01}]}
        for kind in ("explicit", "implicit", "contextual")
    ]
    cases.append({"id": "negative", "kind": "negative", "expected_skill": None,
                  "prompt": "How many rows does data/data.csv have?", "files": ["evals/files/data.csv"]})
    (d / "evals" / "evals.json").write_text(json.dumps({"skill_name": name, "evals": cases}))


def member_specs(skills_dir: Path, out: Path) -> list:
    """One composed run spec per sweep member (Hydra composition is not timed)."""
    specs = []
    for harness in HARNESSES:
        for mode in MODES:
            member = out / f"{harness[0].split('=')[1]}-{mode[0].split('=')[1]}"
            specs.append(compose_spec(["skill=custom", f"skill.paths=[{skills_dir}]", "study.n_attempts=2",
                                       *harness, *mode], output_dir=member))
    return specs


def emit_member(spec) -> tuple[int, int, int, list[str]]:
    """What ``run_study`` does before running trials: plan (load skills and cases), emit."""
    result = emit_study(spec, Path(spec.output_dir) / "tasks", plan_study(spec))
    return len(result.tasks), result.written, result.reused, [t.task_id for t in result.tasks]


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (the pool's workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def emit_matrix(specs: list, workers: int) -> tuple[int, int, int, set[str]]:
    """Emit every sweep member, ``workers`` members at a time (as hydra/launcher=local_parallel
    would run them); returns (dirs, written, reused, distinct task ids)."""
    forget_accepted()  # cold: no task id counts as validated by an earlier run
    if workers > 1:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            results = list(pool.map(emit_member, specs))
    else:
        results = [emit_member(s) for s in specs]
    ids = {i for r in results for i in r[3]}
    return sum(r[0] for r in results), sum(r[1] for r in results), sum(r[2] for r in results), ids


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skills", type=int, default=64)
    args = ap.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="aces-bench-emit-") as tmp:
        tmp = Path(tmp)
        for i in range(args.skills):
            make_skill(tmp / "skills", i)
        trials = args.skills * len(HARNESSES) * 4 * 2 * 2 * len(MODES)
        for workers in (1, 2):
            out = tmp / f"out-{workers}"
            os.environ[CACHE_ENV] = str(tmp / f"accepted-{workers}")  # no id accepted by an earlier run
            specs = member_specs(tmp / "skills", out)
            load = os.getloadavg()[0]
            t, c = time.perf_counter(), _cpu()
            dirs, written, reused, ids = emit_matrix(specs, workers)
            first, first_cpu = time.perf_counter() - t, _cpu() - c
            if workers == 1:
                print(f"matrix: {trials} trials -> {dirs} task dirs on disk ({written} written, {reused} reused), "
                      f"{len(ids)} distinct contents; {len(specs)} sweep members")
            t, c = time.perf_counter(), _cpu()
            dirs2, written2, reused2, _ = emit_matrix(specs, workers)
            again, again_cpu = time.perf_counter() - t, _cpu() - c
            label = f"{workers} member(s) at a time"
            print(f"[{label}] machine load (1 min) {load:.2f} on {os.cpu_count()} cores before the first emit")
            print(f"[{label}] first emit        {first:6.2f} s wall {first_cpu:6.2f} s cpu   target < 20 s   "
                  f"{'ok' if first < 20 else 'MISSED'}   ({1000 * first / max(dirs, 1):.2f} ms per dir)")
            print(f"[{label}] re-emit unchanged {again:6.2f} s wall {again_cpu:6.2f} s cpu   target < 2 s    "
                  f"{'ok' if again < 2 else 'MISSED'}   ({written2} written, {reused2} reused)")
            if workers == 2:  # the targets are for 2 cores
                ok &= first < 20 and again < 2 and written2 == 0 and dirs2 == dirs
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
