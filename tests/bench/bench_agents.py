"""Timings for the reference agent, each printed next to its target.

Run: .venv/bin/python tests/bench/bench_agents.py
Targets: one routing decision over 50 skills < 25 ms; one run() on the host shell
(no sandbox; 5 staged skills, skill path) < 0.5 s.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harbor.environments.base import ExecResult
from harbor.models.agent.context import AgentContext

from aces_bench.agents.reference import ReferenceAgent
from aces_bench.agents.routing import SkillCard, route


class HostShell:
    """Bench-only stand-in for a Harbor environment: bash on the host."""

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):
        proc = await asyncio.create_subprocess_exec("bash", "-c", command, cwd=cwd, stdout=-1, stderr=-1)
        out, err = await proc.communicate()
        return ExecResult(stdout=out.decode(), stderr=err.decode(), return_code=proc.returncode)

    def is_path_mounted(self, environment_path, host_path):
        return True


def cards(n: int) -> list[SkillCard]:
    return [
        SkillCard(key=f"skill-{i:02d}", name=f"skill-{i:02d}", description=f"Process topic{i} widgets and gadget{i} reports for team{i}.")
        for i in range(n)
    ]


def bench_routing() -> bool:
    ok = True
    for n in (1, 5, 50):
        corpus = cards(n)
        route("warm up", corpus)
        times = []
        for i in range(40):
            t = time.perf_counter()
            route(f"Please process the topic{i % n} widgets and gadget{i % n} reports.", corpus)
            times.append(time.perf_counter() - t)
        med = statistics.median(times) * 1000
        target = 25.0
        ok &= med < target if n == 50 else True
        print(f"route() over {n:2d} skills: median {med:6.2f} ms   (target < {target} ms at 50 skills)")
    return ok


def bench_run() -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(5):
            d = root / "skills" / f"skill-{i}"
            (d / "scripts").mkdir(parents=True)
            (d / "SKILL.md").write_text(
                f"---\nname: skill-{i}\ndescription: Count topic{i} widgets in gadget{i} files.\n---\n"
                f"## Usage\n```\npython3 scripts/count.py <in.txt>\n```\n"
            )
            (d / "scripts" / "count.py").write_text("import sys; print(len(open(sys.argv[1]).read().split()))\n")
        ws = root / "workspace" / "data"
        ws.mkdir(parents=True)
        (ws / "in.txt").write_text("a b c\n")
        text = (
            "Count the topic3 widgets in the gadget3 file.\n\n---\n"
            f"Working directory: {root}/workspace\nInput files:\n- data/in.txt\n"
            f"Write your final answer to {root}/workspace/answer.txt.\n"
        )
        times = []
        for i in range(5):
            logs = root / f"logs{i}"
            logs.mkdir()
            agent = ReferenceAgent(logs_dir=logs, skills_dir=str(root / "skills"), deterministic=True)
            t = time.perf_counter()
            asyncio.run(agent.run(text, HostShell(), AgentContext()))
            times.append(time.perf_counter() - t)
        med = statistics.median(times)
        print(f"run() on host shell, 5 skills: median {med:.3f} s   (target < 0.5 s)")
        return med < 0.5


if __name__ == "__main__":
    results = [bench_routing(), bench_run()]
    sys.exit(0 if all(results) else 1)
