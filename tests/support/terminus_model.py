"""A scripted "model" for Harbor's terminus-2 that acts on what its prompt shows it.

Nothing in it knows which arm, case or skill it is in: it reads the task and the
``<available_skills>`` block terminus-2 put in the first prompt, and the terminal
output terminus-2 sends back, the way a model would:

1. It picks the listed skill the task is about: one the task names (its name's words,
   "ledger checksum" for ``ledger-checksum``), else the one sharing the most content
   words with the task (at least two), else none. So in a group workspace a decoy
   whose name the task uses wins the route, as it can with a real model.
2. With a skill: ``cat`` its SKILL.md at the listed location; then run the first
   command of its ``## Usage`` block (``scripts/`` resolved under the skill's folder,
   ``<placeholder>`` filled with the task's input file) into the answer file and print
   the exit status; a zero status ends the task. A SKILL.md without a command, or a
   command that fails, falls back to step 3. Output it expects and does not see yet
   (SKILL.md's text, the exit status) it waits for, as a model polls a slow terminal.
3. On its own it knows two things: a line count (``awk 'END{print NR}'``, which counts
   a last line without a newline) and a word count (``wc -w``); for anything else it
   writes the sum of the file's numbers, a guess.
4. It marks the task complete and confirms when terminus-2 asks.

Each reply is terminus-2's JSON (``analysis``, ``plan``, ``commands``, ``task_complete``).
"""

from __future__ import annotations

import json
import re

from support.model_server import Request, Step, say

_SKILL = re.compile(r"<skill>\s*<name>([^<]*)</name>\s*<description>([^<]*)</description>\s*"
                    r"<location>([^<]*)</location>\s*</skill>", re.S)
_TASK = re.compile(r"Task Description:\n(.*?)(?:\n---\n|<available_skills>|\nCurrent terminal state:)", re.S)
_INPUTS = re.compile(r"^Input files:\n((?:- .+\n?)+)", re.M)
_ANSWER = re.compile(r"Write your final answer to (\S+?)\.?$", re.M)
_WORDS = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an and the of for to in on is are be by with what which how many does do this that it its "
                  "use when give file files input below attached".split())
_EXIT = re.compile(r"^skill-exit=(\d+)\s*$", re.M)
# Turns after which the model stops waiting for output it expects and goes on without it.
MAX_TURNS = 12
_USAGE_BLOCK = re.compile(r"^#+\s*Usage\s*\n+(?:```[^\n]*\n)?(.+?)$", re.M | re.I)


def _content(text: str) -> set[str]:
    return {w.rstrip("s") for w in _WORDS.findall(text.lower()) if w not in _STOP and not w.isdigit()}


def reply(analysis: str, commands: list[str], *, complete: bool = False, duration: float = 0.5) -> Step:
    return say(json.dumps({"analysis": analysis, "plan": "; ".join(commands) or "confirm",
                           "commands": [{"keystrokes": c + "\n", "duration": duration} for c in commands],
                           "task_complete": complete}))


def wait(analysis: str) -> Step:
    """Send nothing and look again in two seconds (terminus-2's way to wait for output)."""
    return say(json.dumps({"analysis": analysis, "plan": "wait", "commands": [{"keystrokes": "", "duration": 2.0}],
                           "task_complete": False}))


class Task:
    """What the first prompt says: the task, its input files, its answer file, the listed skills."""

    def __init__(self, prompt: str):
        m = _TASK.search(prompt)
        self.text = (m.group(1) if m else prompt).strip()
        inputs = _INPUTS.search(prompt)
        self.inputs = [line[2:].strip() for line in inputs.group(1).splitlines()] if inputs else []
        answer = _ANSWER.search(prompt)
        self.answer = answer.group(1) if answer else "/workspace/answer.txt"
        block = prompt.split("<available_skills>", 1)[1] if "<available_skills>" in prompt else ""
        self.skills = [(n.strip(), d.strip(), loc.strip()) for n, d, loc in _SKILL.findall(block)]

    def choose(self) -> tuple[str, str] | None:
        """(name, SKILL.md location) of the skill the task is about, or None."""
        task = self.text.lower()
        named = [(n, loc) for n, _, loc in self.skills if " ".join(n.lower().split("-")) in task]
        if named:
            return named[0]
        words = _content(self.text)
        scored = sorted(((len(words & _content(f"{n} {d}")), n, loc) for n, d, loc in self.skills), reverse=True)
        return (scored[0][1], scored[0][2]) if scored and scored[0][0] >= 2 else None

    def own_answer(self) -> tuple[str, list[str]]:
        """What the model does without a usable skill."""
        f = self.inputs[0] if self.inputs else "."
        task = self.text.lower()
        if "how many lines" in task:
            return "Count the lines, the last one too.", [f"awk 'END{{print NR}}' {f} > {self.answer}"]
        if "how many words" in task:
            return "Count the words.", [f"wc -w < {f} > {self.answer}"]
        return ("No skill tells how; best guess: the sum of the numbers.",
                [f"grep -oE '[0-9]+' {f} | awk '{{s+=$1}} END{{print s}}' > {self.answer}"])


def _assistant_turns(request: Request) -> list[dict]:
    out = []
    for m in request.body.get("messages", []):
        if m.get("role") == "assistant":
            try:
                out.append(json.loads(m.get("content") or "{}"))
            except json.JSONDecodeError:
                out.append({})
    return out


def _usage_command(skill_md: str) -> str | None:
    m = _USAGE_BLOCK.search(skill_md)
    line = m.group(1).strip() if m else ""
    return line if line and not line.startswith(("```", "#")) and " " in line else None


def terminus_model(request: Request) -> Step:
    """The script for ``ModelServer`` (module doc)."""
    users = request.user_texts
    if not users:
        raise AssertionError("terminus-2 sent no user message")
    task = Task(users[0])
    turns = _assistant_turns(request)
    if turns and turns[-1].get("task_complete"):
        return reply("Confirming: the answer file is written.", [], complete=True)
    sent = [c.get("keystrokes", "") for t in turns for c in t.get("commands", [])]
    chosen = task.choose()
    if not turns:
        if chosen is None:
            why, cmds = task.own_answer()
            return reply(f"No listed skill fits. {why}", cmds, complete=True)
        return reply(f"The {chosen[0]} skill fits the task; read it first.", [f"cat {chosen[1]}"])
    seen = "\n".join(users[1:])  # every terminal output so far
    patient = len(turns) < MAX_TURNS
    if any("echo skill-exit=$?" in k for k in sent):
        status = _EXIT.search(seen)
        if status is None and patient:
            return wait("The command has not finished yet.")
        if status is not None and status.group(1) == "0":
            return reply("The skill's command succeeded; its output is the answer.", [], complete=True)
        why, cmds = task.own_answer()
        return reply(f"The skill's command failed. {why}", cmds, complete=True)
    if f"name: {chosen[0]}" not in seen and patient:
        return wait("SKILL.md is not on the screen yet.")
    command = _usage_command(seen)
    if command is None:
        why, cmds = task.own_answer()
        return reply(f"SKILL.md documents no command. {why}", cmds, complete=True)
    skill_dir = chosen[1].rsplit("/", 1)[0]
    inputs = list(task.inputs)
    command = re.sub(r"(?<![\w/])(\./)?scripts/", f"{skill_dir}/scripts/", command)
    command = re.sub(r"<[^<>]+>", lambda _m: inputs.pop(0) if inputs else "", command)
    return reply("Run the skill's documented command.",
                 [f"{command} > {task.answer}; echo skill-exit=$?", f"cat {task.answer}"], duration=1.0)
