"""What a model endpoint saw and answered, read from the wire: the metering record.

The local sandbox reaches its model only through a host-side metering proxy
(``aces_bench.backends.meter``), one per trial, bound inside that trial's own network
namespace. The proxy appends one :class:`MeteredCall` per model request to
``<trial dir>/model-meter.jsonl``, a file on the host outside every sandbox mount. This
module holds what both sides need and nothing that runs a server:

- :func:`response_usage`: the tokens a provider's response reported (Anthropic Messages
  ``message_start``/``message_delta``, OpenAI Responses ``response.completed``, Chat
  Completions ``usage``; streamed as SSE or one JSON body);
- :func:`request_listing`: the skill names a request listed to the model (claude-code's
  Skill-tool reminder, codex's ``### Available skills``, an ``<available_skills>`` block);
- :func:`read_meter`: one trial's record summed (:class:`Metered`), or None when the
  trial had no metering point (its usage is then only the harness's own claim).
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from aces_bench.core.pricing import Usage

METER_FILE = "model-meter.jsonl"
# Where a trial's usage figure comes from (``usage_source`` in the trials table).
METERED = "metered"
CLAIMED = "harness claim"
NO_MODEL = "no model calls (reference agent)"
# Claimed and metered tokens may differ by the CLI's rounding or a call it did not log;
# beyond this share (or a plain count of 100 tokens, whichever is larger) the trial is flagged.
MISMATCH_TOLERANCE = 0.05
_MISMATCH_FLOOR = 100
_MAX_RECORD_LINES = 100_000

_AVAILABLE = re.compile(r"<available_skills>(.*?)</available_skills>", re.S)
_NAME = re.compile(r"<name>(.*?)</name>", re.S)
_CODEX_SKILL = re.compile(r"^- ([^\s:][^:\n]*?): ", re.M)
CLAUDE_LISTING = "The following skills are available for use with the Skill tool:"
# "- name: description", or past claude-code's listing budget "- name" alone; a plugin's
# skill is "<plugin>:<skill>", so the name runs to the first ": " or the end of the line.
_CLAUDE_SKILL = re.compile(r"^- (\S+?)(?::(?: |$)|$)", re.M)


def token_count(value) -> int:
    """A token count from a usage field: a non-negative int, 0 for anything else."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def unique(names) -> list[str]:
    """Names stripped, blanks dropped, first occurrence kept."""
    out: list[str] = []
    for n in names:
        n = str(n).strip()
        if n and n not in out:
            out.append(n)
    return out


# --- what a request listed ---------------------------------------------------------------


def available_skills(text: str) -> list[str] | None:
    """The names in the first ``<available_skills>`` block of a prompt; None when it has none."""
    m = _AVAILABLE.search(text or "")
    if m is None:
        return None
    return unique(html.unescape(n) for n in _NAME.findall(m.group(1)))


def codex_skills(text: str) -> list[str]:
    """The names of codex's ``### Available skills`` list in its developer instructions."""
    start = text.find("### Available skills")
    if start < 0:
        return []
    end = text.find("</skills_instructions>", start)
    block = text[start:end if end > 0 else None]
    return unique(m.group(1) for m in _CODEX_SKILL.finditer(block))


def claude_code_skills(text: str) -> list[str]:
    """The names of claude-code's Skill-tool listing (a ``<system-reminder>`` of the first
    user message: ``- name: description`` lines, then ``- name`` lines once the
    descriptions have used the CLI's listing budget)."""
    start = text.find(CLAUDE_LISTING)
    if start < 0:
        return []
    end = text.find("</system-reminder>", start)
    block = text[start + len(CLAUDE_LISTING):end if end > 0 else None]
    return unique(m.group(1) for m in _CLAUDE_SKILL.finditer(block))


def _strings(value, depth: int = 0) -> Iterator[str]:
    if depth > 12:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)


def _prompt_prefix(items) -> list:
    """The leading messages of a conversation, up to its first tool call or tool result:
    where a harness puts its listing, and what no tool output (a file the agent read,
    a script's stdout) can have written."""
    out = []
    for item in items if isinstance(items, list) else [items]:
        if not isinstance(item, dict):
            out.append(item)
            continue
        kind = item.get("type")
        content = item.get("content")
        parts = content if isinstance(content, list) else []
        if kind in ("function_call", "function_call_output") or item.get("role") == "tool" or any(
                isinstance(p, dict) and p.get("type") in ("tool_use", "tool_result") for p in parts):
            break
        out.append(item)
    return out


def request_listing(body: dict) -> list[str] | None:
    """The skill names one model request listed, in any harness's form; None for a request
    that offers the model no tools (a side call such as opencode's title), whose prompt is
    not the agent's. Only the system prompt and the conversation before its first tool
    call are read."""
    if not body.get("tools"):
        return None
    names: list[str] = []
    prompt = [body.get("system"), body.get("instructions"), _prompt_prefix(body.get("messages") or []),
              _prompt_prefix(body.get("input") or [])]
    for text in _strings(prompt):
        if CLAUDE_LISTING in text:
            names += claude_code_skills(text)
        if "### Available skills" in text:
            names += codex_skills(text)
        if "<available_skills>" in text:
            names += available_skills(text) or []
    return unique(names)


# --- what a response reported --------------------------------------------------------------


def json_objects(lines: Iterable[str], *, sse: bool = False) -> Iterator[dict]:
    """The JSON objects among ``lines``, one per line (JSONL records; with ``sse``, SSE
    ``data:`` events, the prefix dropped); a line that is not one JSON object is passed over."""
    for line in lines:
        line = line.strip()
        if sse and line.startswith("data:"):
            line = line[5:].strip()
        if not line.startswith("{"):
            continue
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            yield item


def response_model(text: str) -> str | None:
    """The model the provider says answered (``message_start``, ``response.*`` or a chat body)."""
    for item in json_objects(text.splitlines(), sse=True):
        for holder in (item.get("message"), item.get("response"), item):
            if isinstance(holder, dict) and isinstance(holder.get("model"), str) and holder["model"]:
                return holder["model"]
    return None


def response_usage(text: str, model: str) -> Usage | None:
    """The usage one model response reported (Anthropic Messages, OpenAI Responses or
    Chat Completions; streamed or not), or None when it reported none."""
    inp = out = read = write = 0
    found = False
    for item in json_objects(text.splitlines(), sse=True):
        kind = item.get("type")
        if kind == "message_start" and isinstance(item.get("message"), dict):
            u = item["message"].get("usage") or {}
        elif kind == "response.completed" and isinstance(item.get("response"), dict):
            u = item["response"].get("usage") or {}
        else:
            u = item.get("usage") if isinstance(item.get("usage"), dict) else None
        if not u:
            continue
        found = True
        if "prompt_tokens" in u:  # chat completions (its last chunk, or the whole reply)
            details = u.get("prompt_tokens_details") or {}
            inp, out, read = token_count(u.get("prompt_tokens")), token_count(u.get("completion_tokens")), token_count(details.get("cached_tokens"))
        elif "input_tokens_details" in u or kind == "response.completed":  # responses: input includes cached
            inp, out = token_count(u.get("input_tokens")), token_count(u.get("output_tokens"))
            read = token_count((u.get("input_tokens_details") or {}).get("cached_tokens"))
        else:  # anthropic: input excludes cache reads and writes; message_delta carries the output
            if "input_tokens" in u or "cache_read_input_tokens" in u:
                r, w = token_count(u.get("cache_read_input_tokens")), token_count(u.get("cache_creation_input_tokens"))
                inp, read, write = token_count(u.get("input_tokens")) + r + w, r, w
            out = max(out, token_count(u.get("output_tokens")))
    return Usage(model, inp, out, read, write, calls=1) if found else None


# --- the record ---------------------------------------------------------------------------


class MeteredCall(BaseModel):
    """One model request as the metering proxy saw it: a line of ``model-meter.jsonl``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    at: float
    method: str
    path: str
    status: int | None = None  # the provider's HTTP status; None: no answer reached the proxy
    model: str = "unknown"  # the provider's answer names it, else the request did
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    usage_reported: bool = False  # False: the response carried no usage (counted as 0 tokens, noted)
    listed: list[str] | None = None  # skills the request listed; None: not an agent request (no tools)
    error: str | None = None

    def usage(self) -> Usage:
        return Usage(self.model, self.input_tokens, self.output_tokens, self.cache_read_tokens,
                     self.cache_write_tokens, calls=1)


def metered_call(*, method: str, path: str, body: dict | None, status: int | None, response: str,
                 error: str | None = None) -> MeteredCall:
    """The record of one request (its parsed JSON body, or None) and its response text."""
    body = body or {}
    asked = body.get("model") if isinstance(body.get("model"), str) else None
    model = response_model(response) or asked or "unknown"
    usage = response_usage(response, model)
    u = usage or Usage(model)
    return MeteredCall(at=time.time(), method=method, path=path, status=status, model=model,
                       input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                       cache_read_tokens=u.cache_read_tokens, cache_write_tokens=u.cache_write_tokens,
                       usage_reported=usage is not None, listed=request_listing(body), error=error)


@dataclass
class Metered:
    """One trial's metering record summed: every model's tokens and what was listed."""

    usage: list[Usage] = field(default_factory=list)
    calls: int = 0
    visible: list[str] | None = None  # None: no agent request passed the meter
    notes: list[str] = field(default_factory=list)

    @property
    def input_tokens(self) -> int:
        return sum(u.input_tokens for u in self.usage)

    @property
    def output_tokens(self) -> int:
        return sum(u.output_tokens for u in self.usage)


def meter_path(trial_dir: Path | str) -> Path:
    return Path(trial_dir) / METER_FILE


def read_meter(trial_dir: Path | str | None) -> Metered | None:
    """The trial's metering record summed, or None when the trial had no metering point
    (no file: an https endpoint, a public network, a backend without the proxy)."""
    if trial_dir is None:
        return None
    path = meter_path(trial_dir)
    if not path.is_file():
        return None
    out = Metered()
    merged: dict[str, Usage] = {}
    listed: list[str] = []
    saw_agent = False
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh):
            if n >= _MAX_RECORD_LINES:
                out.notes.append(f"metering record cut at {_MAX_RECORD_LINES} calls")
                break
            try:
                call = MeteredCall.model_validate_json(line)
            except ValueError:
                continue  # a line torn when the study was killed
            out.calls += 1
            if call.usage_reported:
                u = call.usage()
                merged[u.model] = merged[u.model] + u if u.model in merged else u
            elif call.status is not None and call.status < 400:
                out.notes.append(f"metered: {call.method} {call.path} (HTTP {call.status}) reported no usage")
            if call.listed is not None:
                saw_agent = True
                listed += call.listed
    out.usage = list(merged.values())
    out.visible = unique(listed) if saw_agent else None
    return out


def mismatch(metered: Metered, claimed: list[Usage], tolerance: float = MISMATCH_TOLERANCE) -> str | None:
    """Why the harness's own usage claim disagrees with the metered tokens beyond the
    tolerance (one line), or None when they agree."""
    c_in, c_out = sum(u.input_tokens for u in claimed), sum(u.output_tokens for u in claimed)
    m_in, m_out = metered.input_tokens, metered.output_tokens
    off = [f"{what} {c:,} claimed vs {m:,} metered" for what, c, m in (("input", c_in, m_in), ("output", c_out, m_out))
           if abs(c - m) > max(_MISMATCH_FLOOR, tolerance * m)]
    if not off:
        return None
    return ("usage mismatch: the harness's own record says " + "; ".join(off)
            + f" (tolerance {tolerance:.0%}); cost and cap use the metered tokens")
