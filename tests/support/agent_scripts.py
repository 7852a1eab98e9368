"""Per-harness scripts for the scripted model server: each real agent CLI, paired trial.

The "model" tells the with-skill and the baseline conversation apart the way a model
would: by whether the harness offered the csv-column-sum skill (in its own skill
listing), never by the prompt, which names the skill in both arms. With the skill it
activates it through that harness's own mechanism, then runs the script the skill's
Usage documents (path read from what the activation returned) into answer.txt;
without it, it writes a line count (a wrong answer).
"""

from __future__ import annotations

import json
import re

from support.model_server import Replay, Request, Step, call

SKILL = "csv-column-sum"
ANSWER = "/workspace/answer.txt"
BASELINE = f"wc -l < /workspace/data/sales.csv > {ANSWER}"
_SKILL_DIR = re.compile(r"(/[^\s'\"`<>()]*/" + re.escape(SKILL) + r")(?:/SKILL\.md)?")


class ScriptError(AssertionError):
    """The conversation lacks what a model would need to go on."""


def _skill_offered(request: Request, marker: str) -> bool:
    return any(marker in chunk for chunk in (request.system, *request.user_texts, str(request.body.get("tools", ""))))


def _skill_dir(request: Request) -> str:
    """Where the harness put the skill, from what the activation step returned."""
    for text in [*reversed(request.tool_results + request.user_texts), json.dumps(request.body)]:
        m = _SKILL_DIR.search(text)
        if m:
            return m.group(1)
    raise ScriptError("the skill's folder is not in the conversation")


def _run_script(tool: str, key: str) -> callable:
    def step(request: Request) -> Step:
        if "colsum.py" not in "".join(request.tool_results + request.user_texts):
            raise ScriptError("SKILL.md's Usage (scripts/colsum.py) never reached the model")
        cmd = f"python3 {_skill_dir(request)}/scripts/colsum.py /workspace/data/sales.csv amount > {ANSWER}"
        return call(tool, **{key: cmd})
    return step


def claude_code() -> Replay:
    """claude-code: its ``Skill`` tool lists the skill; calling it loads SKILL.md."""
    def choose(r: Request):
        if _skill_offered(r, f'"{SKILL}"') or _skill_offered(r, f"- {SKILL}:"):
            return [call("Skill", skill=SKILL), _run_script("Bash", "command")]
        return [call("Bash", command=BASELINE)]
    return Replay(choose, final="The answer is in /workspace/answer.txt.")


def codex() -> Replay:
    """codex: lists skills with their SKILL.md path in its instructions; reads it with a shell call."""
    def read_skill(r: Request) -> Step:
        # codex lists "(file: r0/csv-column-sum/SKILL.md)" and defines "- `r0` = `/root/.agents/skills`".
        text = r.system + "".join(r.user_texts)
        m = re.search(r"\(file: (\w+)/" + SKILL + r"/SKILL\.md\)", text)
        root = m and re.search(r"`" + m.group(1) + r"` = `([^`]+)`", text)
        if not root:
            raise ScriptError("codex listed no SKILL.md file for the skill")
        return call("exec_command", cmd=f"cat {root.group(1)}/{SKILL}/SKILL.md")

    def choose(r: Request):
        if _skill_offered(r, f"{SKILL}/SKILL.md"):
            return [read_skill, _run_script("exec_command", "cmd")]
        return [call("exec_command", cmd=BASELINE)]
    return Replay(choose, final="The answer is in /workspace/answer.txt.")


def opencode() -> Replay:
    """opencode: its ``skill`` tool lists the skill; calling it loads SKILL.md."""
    def choose(r: Request):
        if _skill_offered(r, f"<name>{SKILL}</name>") or _skill_offered(r, f"- {SKILL}"):
            return [call("skill", name=SKILL), _run_script("bash", "command")]
        return [call("bash", command=BASELINE, description="count lines")]
    return Replay(choose, final="The answer is in /workspace/answer.txt.")
