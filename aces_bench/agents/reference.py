"""The reference agent: a deterministic, non-LLM Harbor agent.

It gives every study a baseline harness that needs no model and no network: it lists
the skills dir, routes the instruction to at most one skill by BM25L similarity
(``routing.py``), reads that skill's SKILL.md, runs the command documented under
``## Usage`` on the task's input files (``usage.py``) and answers with the script's
output. Without a usable skill it explores the working directory with the shell and
answers with a line count per input file. Every action goes through
``environment.exec``, so it runs on any Harbor backend, and is recorded in an ATIF
trajectory (``atif.py``).

Load it by import path: ``aces_bench.agents.reference:ReferenceAgent``. Options (Harbor
agent kwargs): ``deterministic`` (omit timestamps and the session id from the
trajectory), ``min_shared_terms`` (routing threshold), ``command_timeout_sec``, ``trigger_only`` (stop
at the first activation: ``aces-bench trigger``).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

import yaml
from harbor.agents.base import BaseAgent
from harbor.agents.capabilities import AgentCapabilities
from harbor.agents.options import AgentOptions
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from harbor.models.trajectories import Agent, Trajectory
from pydantic import Field

from aces_bench import __version__
from aces_bench.agents.atif import BASH_TOOL_DEFINITION, TrajectoryRecorder, capped_command, utc_now
from aces_bench.agents.footer import TaskFooter, parse_instruction
from aces_bench.agents.routing import (
    DEFAULT_MIN_SHARED,
    RouteDecision,
    SkillCard,
    route,
)
from aces_bench.agents.usage import (
    Invocation,
    UnusableUsage,
    build_invocation,
    recovery,
    usage_line,
)
from aces_bench.core.io import load_yaml, write_text

AGENT_NAME = "aces-reference"
AGENT_VERSION = f"{__version__}+deterministic.non-llm"
AGENT_LABEL = "reference agent (deterministic, non-LLM)"
TRAJECTORY_FILE = "trajectory.json"
# sed program printing the frontmatter only: quit at once unless line 1 is '---',
# stop at the closing '---', never read past 200 lines.
_FRONTMATTER_SED = r"1{/^---[[:space:]]*$/!q;d;};/^---[[:space:]]*$/q;200q;p"


class ReferenceOptions(AgentOptions):
    """Harbor agent kwargs the reference agent accepts (typos are refused)."""

    deterministic: bool = Field(default=False, description="Omit timestamps and session id from the trajectory.")
    min_shared_terms: int = Field(default=DEFAULT_MIN_SHARED, ge=1, description="Content terms a prompt must share with a skill to route to it.")
    command_timeout_sec: int = Field(default=120, gt=0, description="Timeout for each shell command the agent runs.")
    trigger_only: bool = Field(default=False, description="Stop at the first activation (a trigger trial): read the "
                               "routed skill's SKILL.md and answer without running it.")


class ReferenceAgent(BaseAgent):
    """Deterministic, non-LLM skill-routing agent (see module docstring)."""

    capabilities: ClassVar[AgentCapabilities] = AgentCapabilities(atif=True, skills=True)
    options_model: ClassVar[type[AgentOptions] | None] = ReferenceOptions

    @staticmethod
    def name() -> str:
        return AGENT_NAME

    def version(self) -> str:
        return AGENT_VERSION

    @property
    def settings(self) -> ReferenceOptions:
        options = self.options
        return options if isinstance(options, ReferenceOptions) else ReferenceOptions()

    async def setup(self, environment: BaseEnvironment) -> None:
        """Nothing to install: the agent only needs a POSIX shell with ls, sed, cat."""

    async def set_web_tools_disabled(self, disabled: bool, environment: BaseEnvironment) -> None:
        """The agent has no web tools, so a no-network policy needs no action (and no
        per-trial warning, which Harbor's default logs)."""

    def atif_agent(self) -> Agent:
        """The ATIF ``agent`` block; ``extra`` says what kind of agent this is."""
        return Agent(
            name=AGENT_NAME,
            version=AGENT_VERSION,
            tool_definitions=[BASH_TOOL_DEFINITION],
            extra={
                "label": AGENT_LABEL,
                "deterministic": True,
                "llm": False,
                "timestamps": not self.settings.deterministic,
                "router": "rank_bm25.BM25L over skill name + description",
                "min_shared_terms": self.settings.min_shared_terms,
            },
        )

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        """Answer the task and write ``trajectory.json`` into ``logs_dir``.

        The trajectory is written even when a command raises, so a failed trial still
        shows what the agent did.
        """
        _zero_usage(context)
        footer = parse_instruction(instruction)
        settings = self.settings
        recorder = TrajectoryRecorder(
            self.atif_agent(),
            session_id=None if settings.deterministic else self.session_id,
            clock=None if settings.deterministic else utc_now,
        )
        recorder.credentials = _passed_credentials(environment)
        recorder.user(instruction)
        session = _Session(environment, recorder, footer, settings.command_timeout_sec)
        outcome: dict[str, Any] = {"label": AGENT_LABEL}
        try:
            answer, details = await self._solve(session, settings.min_shared_terms)
            outcome.update(details)
            outcome["answer_written"] = await session.write_answer(answer)
            recorder.final(answer, extra={"answer_path": footer.answer_path, "outcome": outcome["outcome"]})
        finally:
            recorder.extra["aces_reference"] = outcome
            # What the router saw is what this agent was "shown" (aces_bench.agents.shown).
            context.metadata = {**(context.metadata or {}), "aces_reference": outcome, "aces_usage": [],
                                "aces_visible_skills": session.shown,
                                "aces_visible_source": "the reference agent's skill listing"}
            await self._save_trajectory(recorder.trajectory(), environment)

    async def _solve(self, session: _Session, min_shared: int) -> tuple[str, dict[str, Any]]:
        cards = await session.discover_skills(self.skills_dir)
        decision = route(session.footer.prompt, cards, min_shared=min_shared)
        session.shown = [c.name for c in cards]
        details: dict[str, Any] = {"routing": decision.model_dump(mode="json"), "skill": decision.chosen}
        if decision.chosen is not None and self.settings.trigger_only:
            code = await session.activate(decision, self.skills_dir or "")
            return f"activated skill {decision.chosen}", {**details, "outcome": "trigger", "activation_exit": code}
        if decision.chosen is not None:
            answer, problem = await session.use_skill(decision, self.skills_dir or "")
            if answer is not None:
                return answer, {**details, "outcome": "skill"}
            details["fallback_reason"] = problem
        else:
            details["fallback_reason"] = f"no skill routed: {decision.reason}"
        answer = await session.explore()
        return answer, {**details, "outcome": "fallback"}

    async def _save_trajectory(self, trajectory: Trajectory, environment: BaseEnvironment) -> None:
        host_path = Path(self.logs_dir) / TRAJECTORY_FILE
        write_text(host_path, json.dumps(trajectory.to_json_dict(), indent=2, ensure_ascii=False) + "\n")
        env_path = PurePosixPath(self.environment_logs_dir) / TRAJECTORY_FILE
        # Where /logs/agent is not a mount of logs_dir, copy the file in so the verifier
        # sees it at /logs/agent/trajectory.json as on mounted backends.
        if not environment.is_path_mounted(env_path, host_path):
            try:
                await environment.upload_file(host_path, str(env_path))
            except Exception as exc:  # noqa: BLE001 - the host copy is the record; this is a convenience
                self.logger.warning("could not copy %s into the environment: %s", TRAJECTORY_FILE, exc)

    def populate_context_post_run(self, context: AgentContext) -> None:
        """No model is called, so tokens and cost are 0, not unknown."""
        _zero_usage(context)


def _zero_usage(context: AgentContext) -> None:
    context.n_input_tokens = 0
    context.n_cache_tokens = 0
    context.n_output_tokens = 0
    context.cost_usd = 0.0
    if context.model_usage is None:
        context.model_usage = {}


class _Session:
    """One run's shell actions, each executed and recorded as a trajectory step."""

    def __init__(self, environment: BaseEnvironment, recorder: TrajectoryRecorder, footer: TaskFooter, timeout: int):
        self.environment = environment
        self.recorder = recorder
        self.footer = footer
        self.timeout = timeout
        self.shown: list[str] | None = None  # the skills discovered: what this agent was shown

    async def sh(
        self, message: str, command: str, *, cwd: str | None = None, purpose: str, tolerate_errors: bool = False, **extra: Any
    ) -> tuple[int | None, str]:
        """Run ``command``, record it, return (exit code, stdout).

        When ``exec`` itself raises (a timeout, a dead sandbox) the step is recorded
        with no exit code; the error is re-raised, so Harbor reports an
        infrastructure failure, unless ``tolerate_errors`` (a skill script timing out
        is the skill's failure, not the sandbox's), in which case (None, "") is
        returned.
        """
        try:
            # The trajectory records the command as written; what runs caps its output in the sandbox.
            result = await self.environment.exec(capped_command(command), cwd=cwd, timeout_sec=self.timeout)
        except Exception as exc:
            self.recorder.action(message, command, stdout=None, stderr=f"{type(exc).__name__}: {exc}", exit_code=None, extra={"purpose": purpose, **extra})
            if not tolerate_errors:
                raise
            return None, ""
        self.recorder.action(
            message, command, stdout=result.stdout, stderr=result.stderr, exit_code=result.return_code, extra={"purpose": purpose, **extra}
        )
        return result.return_code, result.stdout or ""

    async def discover_skills(self, skills_dir: str | None) -> list[SkillCard]:
        """Skills staged under ``skills_dir`` with readable name/description frontmatter."""
        if not skills_dir:
            return []
        root = PurePosixPath(skills_dir)
        code, out = await self.sh("List the staged skills.", f"ls -1 -- {shlex.quote(str(root))}", purpose="discover")
        if code != 0:
            return []
        cards = []
        for key in sorted({line.strip() for line in out.splitlines() if line.strip() and not line.startswith(".")}):
            skill_md = shlex.quote(str(root / key / "SKILL.md"))
            code, text = await self.sh(
                f"Read the frontmatter of skill {key}.", f"sed -n '{_FRONTMATTER_SED}' {skill_md}", purpose="discover", skill=key
            )
            card = _card(key, text) if code == 0 else None
            if card is not None:
                cards.append(card)
        return cards

    async def _read_skill_md(self, decision: RouteDecision, skill_dir: str) -> tuple[int | None, str]:
        key = decision.chosen or ""
        return await self.sh(
            f"Routing chose skill {key}: {decision.reason}. Read its SKILL.md.",
            f"cat {shlex.quote(skill_dir + '/SKILL.md')}",
            purpose="activate",
            skill=key,
        )

    async def activate(self, decision: RouteDecision, skills_dir: str) -> int | None:
        """Read the routed skill's SKILL.md (the activation) and nothing more; its exit code."""
        code, _ = await self._read_skill_md(decision, str(PurePosixPath(skills_dir) / (decision.chosen or "")))
        return code

    async def use_skill(self, decision: RouteDecision, skills_dir: str) -> tuple[str | None, str]:
        """(answer, "") when the skill's documented command answers, else (None, why not)."""
        key = decision.chosen or ""
        skill_dir = str(PurePosixPath(skills_dir) / key)
        code, text = await self._read_skill_md(decision, skill_dir)
        if code != 0:
            return None, f"could not read {skill_dir}/SKILL.md (exit {code})"
        documented = usage_line(text)
        if documented is None:
            return None, f"{skill_dir}/SKILL.md has no command in a fenced block under a 'Usage' heading"
        try:
            invocation = build_invocation(documented, skill_dir, self.footer.input_files)
        except UnusableUsage as exc:
            return None, str(exc)

        answer, problem, code = await self._invoke(invocation, key, "Run the skill's documented command.")
        if answer is not None:
            return answer, ""
        if invocation.script is not None:
            exists, _ = await self.sh(
                "The command failed; check the skill script exists.", f"test -f {shlex.quote(invocation.script)}", purpose="recover", skill=key
            )
            if exists != 0:
                return None, f"{problem}; the documented script {invocation.script} does not exist"
        retry = recovery(invocation, code if code is not None else -1)
        if retry is None:
            return None, problem
        answer, retry_problem, _ = await self._invoke(retry, key, "Retry the skill's command once.")
        return (answer, "") if answer is not None else (None, f"{problem}; retry: {retry_problem}")

    async def _invoke(self, invocation: Invocation, key: str, message: str) -> tuple[str | None, str, int | None]:
        code, out = await self.sh(
            message,
            invocation.command,
            cwd=self.footer.workdir,
            purpose="run_skill",
            tolerate_errors=True,
            skill=key,
            documented=invocation.documented,
        )
        if code is None:
            return None, f"{invocation.command!r} did not finish", code
        if code != 0:
            return None, f"{invocation.command!r} exited with {code}", code
        if not out.strip():
            return None, f"{invocation.command!r} printed nothing", code
        return out.strip(), "", code

    async def explore(self) -> str:
        """Generic shell exploration; the answer is one summary line per input file."""
        workdir = self.footer.workdir
        code, listing = await self.sh("Explore the working directory.", f"ls -la -- {shlex.quote(workdir)}", purpose="explore")
        if not self.footer.input_files:
            names = _listing_names(listing) if code == 0 else []
            return f"{workdir}: {len(names)} entries ({', '.join(names)})" if names else f"{workdir}: no files found"
        lines = []
        for rel in self.footer.input_files:
            q = shlex.quote(rel)
            # grep -c '' counts a last line without a trailing newline, which wc -l misses.
            code, out = await self.sh(
                f"Inspect input file {rel}.", f"grep -c '' -- {q}; head -n 5 -- {q}", cwd=workdir, purpose="explore", file=rel
            )
            first = out.splitlines()[0].strip() if out.strip() else ""
            lines.append(f"{rel}: {first} lines" if code in (0, 1) and first.isdigit() else f"{rel}: not readable")
        return "\n".join(lines)

    async def write_answer(self, answer: str) -> bool:
        """Write the answer file; True when the shell reports success."""
        path = self.footer.answer_path
        delimiter = "ACES_EOF"
        while delimiter in answer.splitlines():
            delimiter += "_"
        parent = shlex.quote(str(PurePosixPath(path).parent))
        command = f"mkdir -p {parent} && cat > {shlex.quote(path)} <<'{delimiter}'\n{answer}\n{delimiter}"
        code, _ = await self.sh(f"Write the final answer to {path}.", command, purpose="write_answer")
        return code == 0


def _passed_credentials(environment: BaseEnvironment) -> dict[str, str]:
    """The values the task passes into the sandbox (a case's credentials, ``[environment.env]``),
    resolved from the host as Harbor resolves them: the trajectory masks each one."""
    try:
        from harbor.utils.env import resolve_env_vars

        raw = dict(environment.task_env_config.env or {})
        # Only values taken from the host (``${NAME}`` templates): a literal ``LANG=C`` is no secret.
        templated = {k: v for k, v in raw.items() if isinstance(v, str) and v.startswith("${")}
        return {k: v for k, v in resolve_env_vars(templated).items() if isinstance(v, str) and v}
    except Exception:  # noqa: BLE001 - a test double or an unresolved template: nothing to mask
        return {}


def _card(key: str, frontmatter: str) -> SkillCard | None:
    """A routing card from frontmatter text; None when it is not a usable skill."""
    try:
        data = load_yaml(frontmatter)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    name, description = data.get("name"), data.get("description")
    if not isinstance(description, str) or not description.strip():
        return None
    name = name.strip() if isinstance(name, str) and name.strip() else key
    return SkillCard(key=key, name=name, description=" ".join(description.split()))


def _listing_names(listing: str) -> list[str]:
    names = []
    for line in listing.splitlines():
        parts = line.split(maxsplit=8)
        if len(parts) == 9 and parts[8] not in (".", ".."):
            names.append(parts[8])
    return names
