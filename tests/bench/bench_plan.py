"""Plan and emit at 10,000 cases, each printed next to its target.

Run: .venv/bin/python tests/bench/bench_plan.py [--cases 10000]

One skill with ``--cases`` cases (one attempt, the reference harness):

- ``aces-bench plan``: the whole command in-process (composition, case loading, the
  simulated studies of both designs, the stored-baseline lookup), against a store that
  holds an entry, so every baseline task's id is rendered (the worst case; an empty
  store skips that). Target < 10 s.
- emitting the study's tasks (2 per case: with and without the skill) into an empty
  folder, as ``run_study`` does before its first trial. Target < 30 s. How many times
  Harbor's own ``Task.is_valid_dir`` ran is printed beside it (once per dir shape:
  counted, so free of the machine's noise).

The machine is shared, so wall time rises with load: CPU time and the load average are
printed beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HARBOR_TELEMETRY", "0")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harbor.models.task.task import Task  # noqa: E402

from aces_bench.config.compose import compose_spec  # noqa: E402
from aces_bench.emitters import emit_study  # noqa: E402
from aces_bench.emitters.accepted import CACHE_ENV  # noqa: E402
from aces_bench.emitters.plan import plan_study  # noqa: E402
from aces_bench.run.reuse import LAYOUT, STORE_ENV  # noqa: E402
from aces_bench.study import plan as plan_cli  # noqa: E402

PLAN_TARGET_S = 10.0
EMIT_TARGET_S = 30.0


def make_skill(root: Path, n: int) -> Path:
    d = root / "wide-skill"
    (d / "evals").mkdir(parents=True)
    (d / "SKILL.md").write_text("---\nname: wide-skill\ndescription: Add two numbers given in the prompt.\n---\n\n"
                                "# wide-skill\n\nAdd the two numbers and write the sum.\n")
    cases = [{"id": f"case-{i:05d}", "kind": "explicit", "prompt": f"Add {i} and {i + 1}.",
              "assertions": [{"kind": "number", "value": 2 * i + 1}]} for i in range(n)]
    (d / "evals" / "evals.json").write_text(json.dumps({"skill_name": "wide-skill", "evals": cases}))
    return d


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _line(what: str, seconds: float, cpu: float, load: float, target: float) -> bool:
    ok = seconds < target
    print(f"{what}: {seconds:.1f} s (cpu {cpu:.1f} s, load {load:.1f}); target < {target:g} s"
          + ("" if ok else f" MISSED (wall {seconds:.1f} s)"))
    return ok


@contextlib.contextmanager
def _counting_harbor_checks():
    """The dirs Harbor's own check ran on while the block ran."""
    real, seen = Task.is_valid_dir, []

    def counted(path, *args, **kwargs):
        seen.append(path)
        return real(path, *args, **kwargs)

    Task.is_valid_dir = staticmethod(counted)
    try:
        yield seen
    finally:
        Task.is_valid_dir = staticmethod(real)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=10_000)
    args = ap.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="aces-bench-plan-") as tmp:
        tmp = Path(tmp)
        skill = make_skill(tmp / "skills", args.cases)
        store = tmp / "store"
        (store / LAYOUT / "00" / "placeholder").mkdir(parents=True)  # a store with an entry: ids are looked up
        os.environ[STORE_ENV] = str(store)
        overrides = ["skill=custom", f"skill.paths=[{skill}]"]
        load, t, c = os.getloadavg()[0], time.perf_counter(), _cpu()
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            plan_cli.main(overrides)
        ok &= _line(f"plan: {args.cases} cases", time.perf_counter() - t, _cpu() - c, load, PLAN_TARGET_S)
        head = next((ln for ln in printed.getvalue().splitlines() if ln.startswith("  wide-skill:")), "")
        print(f"  {head.strip()[:160]}")

        os.environ[CACHE_ENV] = str(tmp / "accepted")  # no id accepted by an earlier run
        spec = compose_spec(overrides, output_dir=tmp / "out")
        load, t, c = os.getloadavg()[0], time.perf_counter(), _cpu()
        with _counting_harbor_checks() as harbor_checks:
            result = emit_study(spec, tmp / "out" / "tasks", plan_study(spec))
        ok &= _line(f"emit: {args.cases} cases -> {len(result.tasks)} task dirs", time.perf_counter() - t,
                    _cpu() - c, load, EMIT_TARGET_S)
        print(f"  Harbor's Task.is_valid_dir ran {len(harbor_checks)} time(s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
