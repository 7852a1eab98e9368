"""What a harness showed its model and what it spent, read from the files it leaves behind.

Each agent CLI keeps its own record of a run; aces-bench reads it on the host after
the trial (``HarnessTrace``), never the CLI's summary alone:

- claude-code: the session JSONL (``$CLAUDE_CONFIG_DIR/projects/*/*.jsonl``) holds a
  ``skill_listing`` attachment with the names of the skills put in the model's
  context; the stream-json ``result`` event's ``modelUsage`` has every model's tokens
  (small-model side calls included), else each assistant message's usage.
- codex: the rollout (``sessions/**/rollout-*.jsonl``) holds the developer message with
  the ``### Available skills`` list it sent, and a ``token_usage_record`` per response.
- opencode: aces-bench's recording plugin (``aces_bench.agents.installed``) writes one
  line per HTTP call to the model (``aces-model-calls.jsonl``): the skill names of the
  ``<available_skills>`` block in the request and the usage in the response, the
  title call included.
- terminus-2: the ``<available_skills>`` block of the first user message in its
  trajectory.

These files are written inside the sandbox, where a skill can rewrite them: they are the
harness's claim, overridden by the host-side metering record where the trial had one
(:mod:`aces_bench.core.metering`). ``visible`` is None when the record is missing (the
names are then unknown, never guessed); ``[]`` means the model was shown no skill at all.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harbor.models.trial.paths import TrialPaths

from aces_bench.agents.profiles import trajectory_listers
from aces_bench.core.metering import available_skills, codex_skills, json_objects, response_usage, token_count
from aces_bench.core.metering import unique as _unique
from aces_bench.core.pricing import Usage

CLAUDE_OUTPUT = "claude-code.txt"
OPENCODE_CALLS = "aces-model-calls.jsonl"
_MAX_LINES = 200_000  # a trace line budget: a flooded log is read this far, not to the end


@dataclass
class HarnessTrace:
    """What one trial's harness showed and spent."""

    visible: list[str] | None = None
    source: str = ""
    usage: list[Usage] = field(default_factory=list)
    own_cost_usd: float | None = None  # the harness's own figure, kept as evidence only
    notes: list[str] = field(default_factory=list)


def _jsonl(path: Path) -> Iterator[dict]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            yield from json_objects(itertools.islice(fh, _MAX_LINES))
    except OSError:
        return


# --- claude-code -------------------------------------------------------------------------


def claude_code_trace(logs_dir: Path) -> HarnessTrace:
    logs_dir = Path(logs_dir)
    sessions = sorted((logs_dir / "sessions" / "projects").glob("*/*.jsonl"))
    trace = HarnessTrace(source="claude-code session skill_listing")
    listed: list[str] = []
    saw_session = False
    by_message: dict[str, Usage] = {}
    for path in sessions:
        for event in _jsonl(path):
            saw_session = True
            attachment = event.get("attachment")
            if event.get("type") == "attachment" and isinstance(attachment, dict) \
                    and attachment.get("type") == "skill_listing":
                listed += [n for n in attachment.get("names") or [] if isinstance(n, str)]
            message = event.get("message")
            if event.get("type") == "assistant" and isinstance(message, dict) and isinstance(message.get("usage"), dict):
                u = message["usage"]
                read, write = token_count(u.get("cache_read_input_tokens")), token_count(u.get("cache_creation_input_tokens"))
                # claude-code writes one line per content block of a message, each with its usage.
                by_message[str(message.get("id") or len(by_message))] = Usage(
                    str(message.get("model") or "unknown"), token_count(u.get("input_tokens")) + read + write,
                    token_count(u.get("output_tokens")), read, write, calls=1)
    trace.visible = _unique(listed) if saw_session else None
    result = None
    for event in _jsonl(logs_dir / CLAUDE_OUTPUT):
        if event.get("type") == "result":
            result = event
    model_usage = (result or {}).get("modelUsage")
    if isinstance(model_usage, dict) and model_usage:
        for model, u in model_usage.items():
            if not isinstance(u, dict):
                continue
            read, write = token_count(u.get("cacheReadInputTokens")), token_count(u.get("cacheCreationInputTokens"))
            trace.usage.append(Usage(str(model), token_count(u.get("inputTokens")) + read + write,
                                     token_count(u.get("outputTokens")), read, write))
        trace.own_cost_usd = (result or {}).get("total_cost_usd")
    else:
        if by_message:
            trace.notes.append("usage from the session's assistant messages (no stream-json result event)")
        merged: dict[str, Usage] = {}
        for u in by_message.values():
            merged[u.model] = merged[u.model] + u if u.model in merged else u
        trace.usage = list(merged.values())
    return trace


# --- codex ----------------------------------------------------------------------------------


def codex_trace(logs_dir: Path) -> HarnessTrace:
    logs_dir = Path(logs_dir)
    trace = HarnessTrace(source="codex rollout skills_instructions")
    rollouts = sorted((logs_dir / "sessions").glob("**/rollout-*.jsonl"))
    if not rollouts:
        return trace
    listed: list[str] = []
    model = "unknown"
    by_response: dict[str, Usage] = {}
    for path in rollouts:
        for event in _jsonl(path):
            payload = event.get("payload") if isinstance(event.get("payload"), dict) else {}
            kind = event.get("type")
            if kind == "turn_context" and payload.get("model"):
                model = str(payload["model"])
            elif kind == "response_item" and payload.get("type") == "message" and payload.get("role") == "developer":
                for part in payload.get("content") or []:
                    text = part.get("text") if isinstance(part, dict) else None
                    if isinstance(text, str) and "<skills_instructions>" in text:
                        listed += codex_skills(text)
            elif kind == "token_usage_record" and isinstance(payload.get("usage"), dict):
                u = payload["usage"]
                read, write = token_count(u.get("cached_input_tokens")), token_count(u.get("cache_write_input_tokens"))
                key = str(payload.get("response_id") or len(by_response))
                by_response[key] = Usage(model, token_count(u.get("input_tokens")), token_count(u.get("output_tokens")),
                                         read, write, calls=1)
    trace.visible = _unique(listed)
    merged: dict[str, Usage] = {}
    for u in by_response.values():
        merged[u.model] = merged[u.model] + u if u.model in merged else u
    trace.usage = list(merged.values())
    return trace


# --- opencode -------------------------------------------------------------------------------


def opencode_trace(logs_dir: Path) -> HarnessTrace:
    trace = HarnessTrace(source="opencode request <available_skills> (aces-bench recording plugin)")
    path = Path(logs_dir) / OPENCODE_CALLS
    if not path.is_file():
        return trace
    listed: list[str] = []
    saw_agent_call = False
    merged: dict[str, Usage] = {}
    for call in _jsonl(path):
        model = str(call.get("model") or "unknown")
        if call.get("tools"):  # a call offering tools is the agent's; a tool-less one is a side call (title)
            saw_agent_call = True
            names = call.get("skills")
            if isinstance(names, list):
                listed += [str(n) for n in names]
        usage = response_usage(str(call.get("response") or ""), model)
        if usage is None:
            trace.notes.append(f"a call to {call.get('url')} reported no usage")
            usage = Usage(model, calls=1)
        merged[model] = merged[model] + usage if model in merged else usage
    trace.visible = _unique(listed) if saw_agent_call else None
    trace.usage = list(merged.values())
    return trace


# --- terminus-2 and any ATIF trajectory -------------------------------------------------------


def trajectory_visible(trajectory) -> list[str] | None:
    """The ``<available_skills>`` names of a trajectory's first user message ([] when it
    has a first message without a block), None without a user message."""
    for step in getattr(trajectory, "steps", None) or []:
        if getattr(step, "source", None) != "user":
            continue
        message = step.message
        text = message if isinstance(message, str) else " ".join(
            getattr(p, "text", "") or "" for p in (message or []))
        names = available_skills(text)
        return names if names is not None else []
    return None


# --- one answer per trial ------------------------------------------------------------------------

def shown_skills(result, trial_dir: Path | None) -> tuple[list[str] | None, str]:
    """(the skill names a trial's model was shown, where that was read); names None when unknown.

    aces-bench's own harnesses put the names in the agent result (``aces_visible_skills``);
    an agent whose profile says its trajectory lists them (terminus-2) is read from its
    trajectory; any other agent is unknown.
    """
    agent = getattr(result, "agent_result", None)
    meta = (agent.metadata or {}) if agent is not None else {}
    if "aces_visible_skills" in meta:
        names = meta["aces_visible_skills"]
        source = str(meta.get("aces_visible_source") or "")
        return (_unique(names) if isinstance(names, list) else None), source
    info = getattr(result, "agent_info", None)
    if info is not None and getattr(info, "name", None) in trajectory_listers() and trial_dir is not None:
        path = TrialPaths(Path(trial_dir)).agent_dir / "trajectory.json"
        try:
            from harbor.models.trajectories import Trajectory

            trajectory = Trajectory.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None, f"{info.name}: no readable trajectory"
        return trajectory_visible(trajectory), f"{info.name} prompt <available_skills>"
    return None, "not recorded by this harness"
