"""ReferenceAgent.run() end to end against a subprocess-backed test double.

``HostShellTestDouble`` is NOT a Harbor backend: it runs each command with bash on the
host. The tests point the agent's skills dir and the instruction's working directory
at temp folders, so no container path mapping is needed. Real Harbor runs on the
bubblewrap backend live in test_agents_harbor_job.py.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import stat
from pathlib import Path, PurePosixPath

import pytest
from harbor.environments.base import ExecResult
from harbor.models.agent.context import AgentContext
from harbor.models.trajectories import Trajectory

from aces_bench.agents.atif import original_command
from aces_bench.agents.reference import AGENT_LABEL, AGENT_NAME, ReferenceAgent


class HostShellTestDouble:
    """Test double for a Harbor environment: bash on the host, records every command."""

    def __init__(self, mounted: bool = True):
        self.commands: list[str] = []
        self.uploads: list[tuple[Path, str]] = []
        self.mounted = mounted

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None) -> ExecResult:
        # The agent caps each command's output in the sandbox (capped_command): the
        # double runs what it is given and records the command the agent meant.
        self.commands.append(original_command(command))
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", command, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout_sec)
        return ExecResult(stdout=out.decode(), stderr=err.decode(), return_code=proc.returncode)

    def is_path_mounted(self, environment_path, host_path) -> bool:
        return self.mounted

    async def upload_file(self, source_path, target_path) -> None:
        self.uploads.append((Path(source_path), str(target_path)))


COUNTER_SKILL_MD = """---
name: word-counter
description: Count the words and distinct vocabulary of a plain text document.
---
# Word counter

## Usage
```bash
python3 scripts/count.py <document.txt> [--top 5]
```
"""

COUNTER_PY = """import sys
words = open(sys.argv[1]).read().split()
print(f"{len(words)} words, {len(set(w.lower() for w in words))} distinct")
"""


def make_skill(root: Path, key: str, skill_md: str, scripts: dict[str, str]) -> Path:
    d = root / key
    (d / "scripts").mkdir(parents=True)
    (d / "SKILL.md").write_text(skill_md)
    for name, body in scripts.items():
        (d / "scripts" / name).write_text(body)
    return d


@pytest.fixture
def task(tmp_path):
    """A skills dir with one skill, and a workspace holding two input files."""
    skills = tmp_path / "skills"
    make_skill(skills, "word-counter", COUNTER_SKILL_MD, {"count.py": COUNTER_PY})
    ws = tmp_path / "workspace"
    (ws / "data").mkdir(parents=True)
    (ws / "data" / "essay.txt").write_text("The cat saw the dog\nthe end")  # no final newline
    (ws / "data" / "notes.txt").write_text("a\nb\nc\n")
    return tmp_path


def instruction(prompt: str, root: Path, files=("data/essay.txt",)) -> str:
    ws = root / "workspace"
    listed = "".join(f"- {f}\n" for f in files)
    inputs = f"Input files:\n{listed}" if files else ""
    return f"{prompt}\n\n---\nWorking directory: {ws}\n{inputs}Write your final answer to {ws}/answer.txt.\n"


def make_agent(root: Path, **kwargs) -> ReferenceAgent:
    logs = root / "logs"
    logs.mkdir(exist_ok=True)
    return ReferenceAgent(logs_dir=logs, skills_dir=str(root / "skills"), **kwargs)


def run(agent, text, env=None):
    env = env or HostShellTestDouble()
    ctx = AgentContext()
    asyncio.run(agent.run(text, env, ctx))
    traj = Trajectory.model_validate_json((agent.logs_dir / "trajectory.json").read_text())
    return ctx, traj, env


def commands(traj: Trajectory) -> list[str]:
    return [s.tool_calls[0].arguments["command"] for s in traj.steps if s.tool_calls]


def test_identity_and_capabilities(tmp_path):
    agent = make_agent(tmp_path)
    assert ReferenceAgent.import_path() == "aces_bench.agents.reference:ReferenceAgent"
    assert ReferenceAgent.capabilities.atif and ReferenceAgent.capabilities.skills
    info = agent.to_agent_info()
    assert (info.name, info.version) == (AGENT_NAME, "0.1.0+deterministic.non-llm")
    assert agent.atif_agent().extra["label"] == AGENT_LABEL == "reference agent (deterministic, non-LLM)"


def test_unknown_option_is_refused(tmp_path):
    with pytest.raises(ValueError, match="Unknown option 'determinstic'"):
        make_agent(tmp_path, determinstic=True)


def test_routes_reads_skill_and_answers_from_script(task):
    agent = make_agent(task)
    ctx, traj, _ = run(agent, instruction("How many words are in the essay, and how many distinct ones?", task))
    answer = (task / "workspace" / "answer.txt").read_text()
    assert answer == "7 words, 5 distinct\n"
    cmds = commands(traj)
    skills = task / "skills"
    assert cmds[0] == f"ls -1 -- {skills}"
    assert cmds[1].startswith("sed -n ") and cmds[1].endswith(f"{skills}/word-counter/SKILL.md")
    assert cmds[2] == f"cat {skills}/word-counter/SKILL.md"
    assert cmds[3] == f"python3 {skills}/word-counter/scripts/count.py data/essay.txt"
    assert cmds[4].startswith(f"mkdir -p {task}/workspace && cat > {task}/workspace/answer.txt <<'ACES_EOF'\n")

    assert traj.schema_version == "ATIF-v1.8"
    assert traj.agent.name == AGENT_NAME and traj.agent.model_name is None
    assert [s.source for s in traj.steps] == ["user", "agent", "agent", "agent", "agent", "agent", "agent"]
    assert traj.steps[0].message.startswith("How many words")
    assert traj.steps[-1].message == "7 words, 5 distinct" and traj.steps[-1].tool_calls is None
    run_step = traj.steps[4]
    assert run_step.observation.results[0].content == "7 words, 5 distinct\n[exit code: 0]"
    assert run_step.observation.results[0].source_call_id == run_step.tool_calls[0].tool_call_id == "call_4"
    assert all(s.llm_call_count == 0 for s in traj.steps if s.source == "agent")
    assert all(s.tool_calls[0].function_name == "bash" for s in traj.steps if s.tool_calls)
    assert traj.final_metrics.total_prompt_tokens == 0 and traj.final_metrics.total_cost_usd == 0.0
    assert traj.extra["aces_reference"]["outcome"] == "skill"
    assert traj.extra["aces_reference"]["routing"]["chosen"] == "word-counter"

    assert (ctx.n_input_tokens, ctx.n_output_tokens, ctx.n_cache_tokens, ctx.cost_usd) == (0, 0, 0, 0.0)
    assert ctx.metadata["aces_reference"]["skill"] == "word-counter"


def test_negative_prompt_falls_back_to_shell_exploration(task):
    agent = make_agent(task)
    text = instruction("How many lines are in these files?", task, files=("data/essay.txt", "data/notes.txt"))
    ctx, traj, env = run(agent, text)
    assert (task / "workspace" / "answer.txt").read_text() == "data/essay.txt: 2 lines\ndata/notes.txt: 3 lines\n"
    assert not any("cat " in c and "SKILL.md" in c for c in env.commands)
    cmds = commands(traj)
    assert cmds[2] == f"ls -la -- {task}/workspace"
    assert cmds[3] == "grep -c '' -- data/essay.txt; head -n 5 -- data/essay.txt"
    outcome = ctx.metadata["aces_reference"]
    assert outcome["outcome"] == "fallback" and outcome["skill"] is None
    assert outcome["fallback_reason"].startswith("no skill routed: no skill shares 2+ content terms")


def test_no_input_files_summarises_the_workdir(task):
    agent = make_agent(task)
    _, traj, _ = run(agent, instruction("What is in here?", task, files=()))
    assert traj.steps[-1].message == f"{task}/workspace: 1 entries (data)"


def test_failing_script_is_checked_then_falls_back(task):
    make_skill(task / "skills", "broken-counter", COUNTER_SKILL_MD.replace("word-counter", "broken-counter")
               .replace("Count the words", "Tally the words"), {"count.py": "import sys\nsys.exit('boom')\n"})
    shutil.rmtree(task / "skills" / "word-counter")
    agent = make_agent(task)
    ctx, traj, _ = run(agent, instruction("Use broken-counter on the essay.", task))
    cmds = commands(traj)
    assert cmds[3].startswith("python3 ") and cmds[4] == f"test -f {task}/skills/broken-counter/scripts/count.py"
    assert traj.steps[4].observation.results[0].content == "boom\n[exit code: 1]"
    assert traj.steps[4].observation.results[0].extra == {"exit_code": 1}
    outcome = ctx.metadata["aces_reference"]
    assert outcome["outcome"] == "fallback" and outcome["skill"] == "broken-counter"
    assert "exited with 1" in outcome["fallback_reason"]
    assert (task / "workspace" / "answer.txt").read_text() == "data/essay.txt: 2 lines\n"


def test_missing_script_is_reported(task):
    skill_md = COUNTER_SKILL_MD.replace("scripts/count.py", "scripts/gone.py")
    (task / "skills" / "word-counter" / "SKILL.md").write_text(skill_md)
    agent = make_agent(task)
    ctx, _, _ = run(agent, instruction("Count the words in the essay document.", task))
    assert ctx.metadata["aces_reference"]["fallback_reason"].endswith(
        f"the documented script {task}/skills/word-counter/scripts/gone.py does not exist"
    )


def test_direct_script_without_exec_bit_is_retried_with_its_interpreter(task):
    skill_md = COUNTER_SKILL_MD.replace("python3 scripts/count.py", "scripts/count.py")
    (task / "skills" / "word-counter" / "SKILL.md").write_text(skill_md)
    script = task / "skills" / "word-counter" / "scripts" / "count.py"
    script.chmod(script.stat().st_mode & ~(stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))
    agent = make_agent(task)
    ctx, traj, _ = run(agent, instruction("Count the words in the essay document.", task))
    cmds = commands(traj)
    assert cmds[3] == str(script) + " data/essay.txt"
    assert traj.steps[4].observation.results[0].extra["exit_code"] == 126
    assert cmds[5] == f"python3 {script} data/essay.txt"
    assert ctx.metadata["aces_reference"]["outcome"] == "skill"
    assert (task / "workspace" / "answer.txt").read_text() == "7 words, 5 distinct\n"


def test_unusable_usage_falls_back(task):
    agent = make_agent(task)
    ctx, _, _ = run(agent, instruction("Count the words of the document.", task, files=()))
    assert "more placeholders than the task has input files" in ctx.metadata["aces_reference"]["fallback_reason"]


def test_answer_with_heredoc_delimiter_is_written_verbatim(task):
    script = "print('line one')\nprint('ACES_EOF')\nprint(\"it's $HOME `x`\")\n"
    (task / "skills" / "word-counter" / "scripts" / "count.py").write_text(script)
    agent = make_agent(task)
    run(agent, instruction("Count the words in the essay document.", task))
    assert (task / "workspace" / "answer.txt").read_text() == "line one\nACES_EOF\nit's $HOME `x`\n"


def test_deterministic_mode_gives_identical_trajectories(task):
    texts = []
    for _ in range(2):
        agent = make_agent(task, deterministic=True)
        agent.session_id = "trial-abc__agent"
        run(agent, instruction("How many words are in the essay document?", task))
        texts.append((agent.logs_dir / "trajectory.json").read_text())
    assert texts[0] == texts[1]
    data = json.loads(texts[0])
    assert all("timestamp" not in step for step in data["steps"]) and "session_id" not in data
    assert data["agent"]["extra"]["timestamps"] is False

    agent = make_agent(task)
    agent.session_id = "trial-abc__agent"
    _, traj, _ = run(agent, instruction("How many words are in the essay document?", task))
    assert traj.session_id == "trial-abc__agent" and all(s.timestamp for s in traj.steps)


def test_trajectory_is_copied_into_an_unmounted_environment(task):
    agent = make_agent(task)
    _, _, env = run(agent, instruction("Count the essay words.", task), HostShellTestDouble(mounted=False))
    assert env.uploads == [(agent.logs_dir / "trajectory.json", str(PurePosixPath("/logs/agent/trajectory.json")))]


def test_sandbox_error_propagates_after_the_trajectory_is_written(task):
    class Exploding(HostShellTestDouble):
        async def exec(self, command, **kw):
            if original_command(command).startswith("mkdir -p"):
                raise RuntimeError("sandbox died")
            return await super().exec(command, **kw)

    agent = make_agent(task)
    with pytest.raises(RuntimeError, match="sandbox died"):
        asyncio.run(agent.run(instruction("Count the essay words.", task), Exploding(), AgentContext()))
    traj = Trajectory.model_validate_json((agent.logs_dir / "trajectory.json").read_text())
    last = traj.steps[-1]
    assert last.tool_calls[0].arguments["command"].startswith("mkdir -p")
    assert last.observation.results[0].content == "RuntimeError: sandbox died\n[exit code: none (the command did not finish)]"


def test_populate_context_post_run_reports_zero_not_unknown(tmp_path):
    ctx = AgentContext()
    make_agent(tmp_path).populate_context_post_run(ctx)
    assert (ctx.n_input_tokens, ctx.n_cache_tokens, ctx.n_output_tokens, ctx.cost_usd, ctx.model_usage) == (0, 0, 0, 0.0, {})


def test_example_skill_invoice_reconciler(tmp_path):
    """The packaged example skill, run through its real script."""
    example = Path(__file__).resolve().parents[2] / "aces_bench" / "examples" / "skills" / "invoice-reconciler"
    if not (example / "SKILL.md").is_file():
        pytest.skip(f"example skill not present at {example}")
    shutil.copytree(example, tmp_path / "skills" / "invoice-reconciler")
    (tmp_path / "workspace" / "data").mkdir(parents=True)
    for name in ("march-ledger.csv", "march-bank.csv"):
        shutil.copy(example / "evals" / "files" / name, tmp_path / "workspace" / "data" / name)
    agent = make_agent(tmp_path)
    prompt = "Our March receivables ledger does not agree with the bank statement. Which invoices are unpaid?"
    ctx, traj, _ = run(agent, instruction(prompt, tmp_path, files=("data/march-ledger.csv", "data/march-bank.csv")))
    assert ctx.metadata["aces_reference"]["outcome"] == "skill"
    assert "1,400.07" in traj.steps[-1].message


def test_script_timeout_is_the_skills_failure_not_the_sandboxs(task):
    class SlowScript(HostShellTestDouble):
        async def exec(self, command, **kw):
            if original_command(command).startswith("python3 "):
                raise TimeoutError("Command timed out after 120 seconds")
            return await super().exec(command, **kw)

    agent = make_agent(task)
    ctx, traj, _ = run(agent, instruction("Count the essay words.", task), SlowScript())
    outcome = ctx.metadata["aces_reference"]
    assert outcome["outcome"] == "fallback"
    assert "did not finish" in outcome["fallback_reason"]
    assert traj.steps[4].observation.results[0].extra == {"exit_code": None}


def test_unwritable_answer_path_is_recorded(task):
    (task / "blocker").write_text("a file, not a folder")
    text = instruction("Count the essay words.", task).replace(
        f"Write your final answer to {task}/workspace/answer.txt.", f"Write your final answer to {task}/blocker/answer.txt."
    )
    ctx, _, _ = run(make_agent(task), text)
    assert ctx.metadata["aces_reference"]["answer_written"] is False
