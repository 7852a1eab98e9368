"""Harbor's installed agents (claude-code, codex, opencode) as aces-bench runs them.

Each is Harbor's own agent with three things added, the same way for all three:

1. **Bundled skills are a controlled variable** (``bundled_skills="off"``, the
   default; ``"keep"`` leaves them): the skills a CLI ships with would otherwise be
   listed to the model in both arms. The switches are the pinned CLIs' own, checked
   against each binary with a scripted model server (tests/agents):
   claude-code's ``disableBundledSkills`` setting (its ``--settings`` layer), codex's
   ``[skills.bundled] enabled = false`` in ``config.toml``, and opencode's
   ``permission.skill`` set to ``deny`` for every skill it reports as built in
   (``opencode debug skill``, location ``<built-in>``).
2. **What the model was shown and what it cost** are read from the CLI's own record
   after the run (:mod:`aces_bench.agents.traces`) into the agent result:
   ``metadata["aces_visible_skills"]`` (the names listed to the model; None when the
   record is missing), ``metadata["aces_usage"]`` (every model's tokens, auxiliary
   calls included) and ``cost_usd`` priced by aces-bench's one price function
   (``aces_bench.core.pricing``); the CLI's own cost figure is kept as
   ``metadata["harness_cost_usd"]``.
3. A CLI already on PATH is used as is (``aces-bench agents install`` mounts it);
   Harbor's opencode would otherwise install Node and ``opencode-ai`` from the network.

opencode keeps no record of its system prompt or of its side calls (the title), so a
small plugin aces-bench writes into its config folder records each model call: the
skill names of the request's ``<available_skills>`` block and the response's usage.
Like every file the agent can write, that record is evidence from inside the sandbox:
a hostile agent could rewrite it (as it could the CLIs' own session files). So all of
this is the harness's *claim*: where the trial had a host-side metering point
(``aces_bench.backends.meter``), cost, the cap and proof of load read the metering
record instead, and a claim that disagrees with it is flagged (``aces_bench.run.cost``).

``ClaudeCode`` also loads every plugin a task stages under ``/plugins/<name>/``
(``skill.intervention=plugin``) with the CLI's own ``--plugin-dir``: its commands,
agents, hooks, MCP servers and skills, as a user who installed the plugin has them. A
plugin's skills then come with the plugin (named ``<plugin>:<skill>``) and are not
copied again from the skills dir. A task without plugins runs exactly as Harbor's agent does.
"""

from __future__ import annotations

import base64
import json
import shlex
from copy import deepcopy
from pathlib import Path
from typing import Any, ClassVar, Literal

from harbor.agents.installed.claude_code import ClaudeCode as HarborClaudeCode
from harbor.agents.installed.claude_code import ClaudeCodeOptions
from harbor.agents.installed.codex import Codex as HarborCodex
from harbor.agents.installed.codex import CodexOptions
from harbor.agents.installed.opencode import OpenCode as HarborOpenCode
from harbor.agents.installed.opencode import OpenCodeOptions
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext, ModelUsage
from pydantic import Field

from aces_bench.agents.traces import (
    OPENCODE_CALLS,
    HarnessTrace,
    claude_code_trace,
    codex_trace,
    opencode_trace,
)
from aces_bench.core.pricing import cost_of

IMPORT_PATH_CLAUDE_CODE = "aces_bench.agents.installed:ClaudeCode"
IMPORT_PATH_CODEX = "aces_bench.agents.installed:Codex"
IMPORT_PATH_OPENCODE = "aces_bench.agents.installed:OpenCode"
PLUGINS_DIR = "/plugins"
"""Where a task stages whole plugins (``emitters``); the same path in every sandbox."""

BundledSkills = Literal["off", "keep"]
_BUNDLED_DOC = "off: hide the skills the CLI ships with from the model (both arms); keep: leave them listed"


# Harbor validates an agent's kwargs against its options model (extra keys refused).
class ClaudeCodeAcesOptions(ClaudeCodeOptions):
    bundled_skills: BundledSkills = Field(default="off", description=_BUNDLED_DOC)


class CodexAcesOptions(CodexOptions):
    bundled_skills: BundledSkills = Field(default="off", description=_BUNDLED_DOC)


class OpenCodeAcesOptions(OpenCodeOptions):
    bundled_skills: BundledSkills = Field(default="off", description=_BUNDLED_DOC)


def _check_bundled(value: str) -> BundledSkills:
    if value not in ("off", "keep"):
        raise ValueError(f"bundled_skills must be 'off' or 'keep', not {value!r}")
    return value  # type: ignore[return-value]


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def record_trace(context: AgentContext, trace: HarnessTrace) -> None:
    """Put a harness's trace into the agent result: shown skills, every model's tokens
    and the cost at aces-bench's list prices (never the harness's own figure)."""
    meta = dict(context.metadata or {})
    meta["aces_visible_skills"] = trace.visible
    meta["aces_visible_source"] = trace.source
    if trace.notes:
        meta["aces_trace_notes"] = trace.notes
    if trace.own_cost_usd is not None or context.cost_usd is not None:
        meta["harness_cost_usd"] = trace.own_cost_usd if trace.own_cost_usd is not None else context.cost_usd
    if trace.usage:
        meta["aces_usage"] = [u.__dict__ for u in trace.usage]
        context.n_input_tokens = sum(u.input_tokens for u in trace.usage)
        context.n_output_tokens = sum(u.output_tokens for u in trace.usage)
        context.n_cache_tokens = sum(u.cache_read_tokens for u in trace.usage)
        cost = cost_of(trace.usage)
        context.cost_usd = cost.usd if cost.complete else None
        context.model_usage = {
            u.model: ModelUsage(n_input_tokens=u.input_tokens, n_cache_tokens=u.cache_read_tokens,
                                n_output_tokens=u.output_tokens, cost_usd=cost.by_model.get(u.model))
            for u in trace.usage
        }
    else:
        # No record of usage: the cost is unknown, not the harness's own guess.
        context.cost_usd = None
    context.metadata = meta


class ClaudeCode(HarborClaudeCode):
    """Harbor's claude-code; bundled skills off by the ``disableBundledSkills`` setting."""

    options_model = ClaudeCodeAcesOptions

    def __init__(self, *args, config: Any = None, **kwargs):
        self.bundled_skills = _check_bundled(kwargs.get("bundled_skills", "off"))
        if self.bundled_skills == "off":
            settings = config if isinstance(config, dict) else {}
            if config is not None and not isinstance(config, dict):
                settings = json.loads(Path(config).read_text())
            config = _merge(settings, {"disableBundledSkills": True})
        super().__init__(*args, config=config, **kwargs)

    def build_cli_flags(self) -> str:
        # Evaluated by the shell that runs claude, inside the sandbox: nothing when the task stages no plugin.
        plugins = (f'$(for d in {PLUGINS_DIR}/*/; do [ -d "$d" ] && printf -- "--plugin-dir %s " "${{d%/}}"; '
                   "done 2>/dev/null)")
        return " ".join(f for f in (super().build_cli_flags(), plugins) if f)

    def _build_register_skills_command(self) -> str | None:
        if not self.skills_dir:
            return None
        src = shlex.quote(self.skills_dir)
        # A skill a staged plugin brings is loaded with the plugin; copying it too would list it twice.
        return (f'(for s in {src}/*; do n="${{s##*/}}"; ls -d {PLUGINS_DIR}/*/skills/"$n" >/dev/null 2>&1 '
                '|| cp -r "$s" $CLAUDE_CONFIG_DIR/skills/; done) 2>/dev/null || true')

    def populate_context_post_run(self, context: AgentContext) -> None:
        super().populate_context_post_run(context)
        record_trace(context, claude_code_trace(self.logs_dir))


class Codex(HarborCodex):
    """Harbor's codex; bundled skills off by ``[skills.bundled] enabled = false``.

    With a ``base_url`` it talks to the endpoint through a provider of its own
    (``wire_api = "responses"``): the built-in openai provider first tries a WebSocket
    at that URL several times (seconds lost per trial) before falling back to HTTPS.
    """

    PROVIDER: ClassVar[str] = "aces"
    options_model = CodexAcesOptions

    def __init__(self, *args, config: Any = None, base_url: str | None = None, **kwargs):
        self.bundled_skills = _check_bundled(kwargs.get("bundled_skills", "off"))
        native: dict[str, Any] = {}
        if config is not None:
            import toml

            native = deepcopy(config) if isinstance(config, dict) else toml.loads(Path(config).read_text())
        if self.bundled_skills == "off":
            native = _merge(native, {"skills": {"bundled": {"enabled": False}}})
        if base_url and "model_provider" not in native:
            native = _merge(native, {"model_provider": self.PROVIDER, "model_providers": {self.PROVIDER: {
                "name": self.PROVIDER, "env_key": "OPENAI_API_KEY", "wire_api": "responses"}}})
        super().__init__(*args, config=native or None, base_url=base_url, **kwargs)

    def populate_context_post_run(self, context: AgentContext) -> None:
        super().populate_context_post_run(context)
        record_trace(context, codex_trace(self.logs_dir))


# opencode loads every *.js in its config's plugin folder. This one wraps fetch to keep,
# per call to a model (a JSON body with a "model"), the skill names of the request's
# <available_skills> block and the usage lines of the response: opencode records neither.
_RECORDER_JS = r"""
import { appendFileSync } from "node:fs";
const LOG = __LOG__;
const realFetch = globalThis.fetch;
function skillNames(text) {
  const m = /<available_skills>([\s\S]*?)<\/available_skills>/.exec(text);
  return m ? [...m[1].matchAll(/<name>([\s\S]*?)<\/name>/g)].map((x) => x[1].trim()) : null;
}
function reduce(o) {
  const r = { type: o.type };
  if (o.usage) r.usage = o.usage;
  if (o.message && o.message.usage) r.message = { usage: o.message.usage };
  if (o.response && o.response.usage) r.response = { usage: o.response.usage };
  return JSON.stringify(r);
}
function usageLines(text) {
  const out = [];
  for (let line of text.split("\n")) {
    line = line.trim();
    if (line.startsWith("data:")) line = line.slice(5).trim();
    if (!line.startsWith("{") || !line.includes("usage")) continue;
    try { out.push(reduce(JSON.parse(line))); } catch (e) {}
    if (out.length > 50) break;
  }
  return out.join("\n");
}
function write(entry) {
  try { appendFileSync(LOG, JSON.stringify(entry) + "\n"); } catch (e) {}
}
globalThis.fetch = async function (input, init) {
  const res = await realFetch(input, init);
  let body = init && typeof init.body === "string" ? init.body : null;
  let req = null;
  try { req = body ? JSON.parse(body) : null; } catch (e) {}
  if (!req || typeof req.model !== "string") return res;
  const entry = {
    url: typeof input === "string" ? input : (input && input.url) || String(input),
    model: req.model, status: res.status,
    tools: Array.isArray(req.tools) ? req.tools.length : 0,
    skills: skillNames(body),
  };
  res.clone().text().then(
    (text) => { entry.response = usageLines(text); write(entry); },
    (err) => { entry.error = String(err); write(entry); },
  );
  return res;
};
export const AcesRecorder = async () => ({});
"""


class OpenCode(HarborOpenCode):
    """Harbor's opencode: a provisioned CLI used as is, bundled skills denied, each model
    call recorded (module doc)."""

    _builtin_skills: ClassVar[dict[str, list[str]]] = {}  # per CLI version, probed once per process
    options_model = OpenCodeAcesOptions

    def __init__(self, *args, **kwargs):
        self.bundled_skills = _check_bundled(kwargs.get("bundled_skills", "off"))
        super().__init__(*args, **kwargs)

    async def install(self, environment: BaseEnvironment) -> None:
        probe = await environment.exec(command="command -v opencode && opencode --version")
        if probe.return_code == 0:
            self.logger.debug(f"opencode is already on PATH: {(probe.stdout or '').strip()}")
            return
        await super().install(environment)

    async def _builtin(self, environment: BaseEnvironment) -> list[str]:
        """The skills this opencode ships with, as it reports them itself."""
        probe = await environment.exec(command="opencode --version 2>/dev/null; opencode debug skill 2>/dev/null")
        text = probe.stdout or ""
        version = text.splitlines()[0].strip() if text.strip() else "?"
        if version in self._builtin_skills:
            return self._builtin_skills[version]
        start = text.find("[")
        try:
            skills = json.loads(text[start:]) if start >= 0 else []
        except ValueError:
            skills = []
        names = sorted({s["name"] for s in skills if isinstance(s, dict) and s.get("location") == "<built-in>"
                        and isinstance(s.get("name"), str)})
        if probe.return_code != 0 or start < 0:
            raise RuntimeError(f"`opencode debug skill` failed (exit {probe.return_code}): cannot find its bundled "
                               "skills to turn them off; use harness.bundled_skills=keep to run with them")
        type(self)._builtin_skills[version] = names
        return names

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        if self.bundled_skills == "off":
            denied = {name: "deny" for name in await self._builtin(environment)}
            if denied:
                self._opencode_config = _merge(self._opencode_config, {"permission": {"skill": denied}})
        log = (self.environment_logs_dir / OPENCODE_CALLS).as_posix()
        script = _RECORDER_JS.replace("__LOG__", json.dumps(log))
        encoded = base64.b64encode(script.encode()).decode()
        # With a plugin present opencode waits for its background `npm install` of
        # @opencode-ai/plugin into the config folder (unused here): offline that is a
        # minute of retries per trial. The folder's own .npmrc makes it fail at once,
        # without touching npm for anything the agent runs in the workspace.
        await self.exec_as_agent(environment, command=(
            "mkdir -p ~/.config/opencode/plugin && "
            "printf 'offline=true\\n' > ~/.config/opencode/.npmrc && "
            f"echo {shlex.quote(encoded)} | base64 -d > ~/.config/opencode/plugin/aces-recorder.js"))
        await super().run(instruction, environment, context)

    def populate_context_post_run(self, context: AgentContext) -> None:
        super().populate_context_post_run(context)
        record_trace(context, opencode_trace(self.logs_dir))
