"""A scripted "model" that drives Harbor's terminus-2 through the csv-column-sum task.

terminus-2 (json parser, Harbor 0.25) wants each reply as one JSON object with
``analysis``, ``plan``, ``commands`` (``keystrokes`` sent verbatim to tmux, ``duration``
in seconds) and ``task_complete``; it asks for ``task_complete`` twice (mark, then
confirm). The policy is a script for the scripted model server
(``tests/support/model_server.py``): a pure function of the chat so far, like a model:

- with the skill listed in ``<available_skills>``: ``cat`` the SKILL.md at its listed
  location, then run the command its Usage section shows (read from the terminal
  output terminus-2 sends back, so the reply depends on what really ran in the
  sandbox), writing ``/workspace/answer.txt``; then mark complete and confirm.
- without it (baseline): look at the data, write a line count (a wrong answer), mark
  complete and confirm.
"""

from __future__ import annotations

import json
import re

from support.model_server import Request, Step, message_text, say

SKILL = "csv-column-sum"
COLUMN = "amount"
_LOCATION = re.compile(r"<location>([^<]*/" + re.escape(SKILL) + r"/SKILL\.md)</location>")
_USAGE = re.compile(r"python3 (scripts/\S+\.py) <file\.csv> (\w+)")


class PolicyError(AssertionError):
    """The chat did not contain what a model would need to go on."""


def reply(analysis: str, commands: list[str], *, complete: bool = False) -> Step:
    return say(json.dumps({
        "analysis": analysis,
        "plan": "; ".join(commands) or "confirm",
        "commands": [{"keystrokes": c + "\n", "duration": 0.2} for c in commands],
        "task_complete": complete,
    }))


def terminus_policy(request: Request) -> Step:
    messages = request.body.get("messages", [])
    users = [message_text(m) for m in messages if m.get("role") == "user"]
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    if not users:
        raise PolicyError("no user message in the request")
    first, last = users[0], users[-1]
    location = _LOCATION.search(first)
    if location is None:
        return _baseline(turn)
    skill_md = location.group(1)
    skill_dir = skill_md.rsplit("/", 1)[0]
    if turn == 0:
        return reply("The csv-column-sum skill is available; read it first.", [f"cat {skill_md}"])
    if turn == 1:
        usage = _USAGE.search(last)
        if usage is None:
            raise PolicyError(f"SKILL.md's Usage line is not in the terminal output:\n{last[-800:]}")
        script, column = usage.groups()
        return reply("SKILL.md documents its script; run it on the staged CSV.",
                     [f"python3 {skill_dir}/{script} data/sales.csv {column} > /workspace/answer.txt",
                      "cat /workspace/answer.txt"])
    if turn == 2:
        if "total=" not in last:
            raise PolicyError(f"the script's output is not in the terminal:\n{last[-800:]}")
        return reply("The answer file holds the total.", [], complete=True)
    return reply("Confirming completion.", [], complete=True)


def _baseline(turn: int) -> Step:
    if turn == 0:
        return reply("No skill is listed; count the data lines instead.",
                     ["ls data", "wc -l < data/sales.csv > /workspace/answer.txt"], complete=True)
    return reply("Confirming completion.", [], complete=True)
