"""Helpers for the harness/job tests: fixture paths, the CLI in a subprocess, sandbox leftovers.

Every study here puts the local backend's private roots under the test's own tmp dir
(``backend.kwargs.root_parent``), so leftovers are checked without confusing them
with other runs on the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_SKILL = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"
SLOW_SKILL = ROOT / "tests" / "fixtures" / "slow-colsum"
ROOT_PREFIX = "aces-sandbox-"

OFFLINE_ENV = {"HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}

# Real trials on the local backend: marker ``sandbox``, skipped without bubblewrap (tests/conftest.py).
needs_bwrap = pytest.mark.sandbox


def study_overrides(*, skill: Path = FIXTURE_SKILL, cases: tuple[str, ...] = ("explicit-1",),
                    root_parent: Path, extra: tuple[str, ...] = ()) -> list[str]:
    """Overrides for a small study on one custom skill, private roots in ``root_parent``."""
    return [
        "skill=custom",
        f"skill.paths=[{skill}]",
        f"skill.cases=[{','.join(cases)}]",
        f"+backend.kwargs.root_parent={root_parent}",
        "report=false",
        *extra,
    ]


def cli_argv(*args: str) -> list[str]:
    # -X faulthandler: a hung run killed with SIGABRT prints every thread's stack.
    return [sys.executable, "-X", "faulthandler", "-m", "aces_bench.cli", *args]


def cli_env() -> dict[str, str]:
    env = {**os.environ, **OFFLINE_ENV}
    # No terminal and no colour: what a CI log or a pipe sees.
    env.pop("FORCE_COLOR", None)
    env["TERM"] = "dumb"
    return env


# Python leaves SIGINT ignored when it starts ignored (as in a background job, which is
# where a CI runner may start the tests): then Ctrl-C could never be simulated.
_CTRL_C_ABLE = (
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('aces_bench.cli', run_name='__main__', alter_sys=True)"
)


def start_cli(*args: str) -> subprocess.Popen:
    """Start ``aces-bench`` in a subprocess a user could Ctrl-C (output merged, text)."""
    argv = [sys.executable, "-X", "faulthandler", "-c", _CTRL_C_ABLE, *args]
    return subprocess.Popen(argv, cwd=ROOT, env=cli_env(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def run_cli(*args: str, timeout: float = 120, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``aces-bench`` in a subprocess (stdin closed, output captured, no TTY); ``env`` adds variables."""
    return subprocess.run(cli_argv(*args), check=False, cwd=ROOT, env={**cli_env(), **(env or {})},
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)


def read_table(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "trials.parquet")


def job_dirs(out: Path) -> list[Path]:
    return sorted(p for p in (out / "jobs").glob("*") if p.is_dir())


def trial_results(out: Path) -> dict[str, Path]:
    """Trial dir name -> its result.json, over every job of a study output dir."""
    return {p.parent.name: p for p in (out / "jobs").glob("*/*/result.json")}


def retained_answer(trial_dir: str | Path) -> str | None:
    """The final ``answer.txt`` the verifier retained, wherever Harbor put the artifacts."""
    for ws in ("artifacts/workspace", "artifacts/logs/artifacts/workspace"):
        path = Path(trial_dir) / ws / "answer.txt"
        if path.is_file():
            return path.read_text().strip()
    return None


def private_roots(parent: Path) -> list[Path]:
    return sorted(parent.glob(f"{ROOT_PREFIX}*"))


def sandbox_processes(parent: Path) -> list[str]:
    """Live (non-zombie) processes whose command line mentions a private root in ``parent``."""
    found = []
    needle = f"{parent}/{ROOT_PREFIX}"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmdline and state != "Z":
            found.append(f"{proc.name}: {cmdline.strip()}")
    return found


def wait_until_gone(parent: Path, timeout: float = 10.0, *, roots_too: bool = True) -> tuple[list[str], list[Path]]:
    """Sandbox processes (and private roots) still there after up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        procs, roots = sandbox_processes(parent), private_roots(parent)
        if (not procs and not (roots_too and roots)) or time.monotonic() > deadline:
            return procs, roots
        time.sleep(0.1)
