"""Harness profiles: a harness a study can name (``harness=<name>``) and what aces-bench knows of it.

Every harness aces-bench knows is one ``HarnessProfile`` in ``HARNESSES``, built-in or not:
the built-ins are registered at the bottom of this module by import path
(``aces_bench/agents/builtins.py``, imported on first read, so listing the names imports
nothing), a plugin the same way with one file: its Harbor agent class and one
``HARNESSES.register(name, HarnessProfile(...))`` (``docs/extending.md``). The graders,
``aces-bench trigger`` and the paper page read harness facts only from here: tool names
and their kinds, skill folders, skill config files, the turn-limit kwarg, the paper's
label.

How a study *runs* a built-in harness stays in its YAML (``conf/harness/<name>.yaml``,
what a user reads and overrides); its profile holds the grading facts and repeats only
``cli`` and ``import_path``/``agent``, which a test holds equal to the YAML. When the
config is registered (``config.store.register``) every plugin profile becomes a
``harness`` option beside the YAML ones, so ``aces-bench --help`` lists it and
``harness=<name>`` composes it; a built-in one has its YAML already, and a grading-only
one (``runnable=False``: a harness whose trajectories are graded but which this project
does not run itself, e.g. gemini-cli) is no option.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from aces_bench.core.registry import Registry, load_path

TOOL_KINDS = ("shell", "read", "write", "edit", "list", "search", "activate", "web", "delegate", "control", "other",
              "editor")
"""What a tool call does, as the graders' view of a trajectory names it (``graders.tool_calls.CallKind``).
``editor`` is a text-editor tool whose ``command`` argument says which (``view`` a read,
``create`` a write, anything else an edit); ``other`` is deliberate: the harness has the
tool and it is none of the others."""

WireApi = Literal["anthropic", "openai-responses", "openai-chat"]
"""A wire API a harness speaks to its model, or a model endpoint speaks (``model.api``);
``agents/endpoints.API_NAMES`` names each for messages."""
WIRE_APIS: tuple[str, ...] = get_args(WireApi)


def named_kinds(**names: str) -> dict[str, str]:
    """``shell="bash exec_command"`` -> {"bash": "shell", "exec_command": "shell"}."""
    return {tool: kind for kind, tools in names.items() for tool in tools.split()}


GENERIC_TOOL_KINDS: dict[str, str] = named_kinds(
    # No profile here claims these from evidence; they are the common names of shell, file,
    # search, web, skill and editor tools in other agents' APIs (MCP filesystem servers,
    # SWE-agent/OpenHands' str_replace_editor, goose's text_editor, Cursor, Copilot, Cline,
    # older codex: container.exec, local_shell). Kept so a trajectory from a harness with no
    # profile (harness=harbor harness.agent=<any>) is graded as it was before profiles held
    # the names. Read only after every profile; a profile that claims one of them wins.
    shell="execute_command run_command terminal run_terminal_cmd run_in_terminal execute cmd container.exec "
          "local_shell",
    read="view view_file open_file cat get_file_contents",
    write="create_file create",
    edit="edit_file insert search_replace",
    list="list_dir list_files find_files",
    search="search ripgrep codebase_search file_search",
    activate="load_skill use_skill",
    web="fetch browse",
    delegate="subagent delegate",
    control="task_complete finish submit todo_write think",
    editor="str_replace_editor text_editor",
)

GENERIC_SKILL_ROOTS: tuple[str, ...] = (
    "/runtime/skills",  # Harbor's default [environment].skills_dir, whatever the harness
    "/plugins/*/skills",  # a plugin staged whole (skill.intervention=plugin), any harness may read it
    "**/.cursor/skills",  # Cursor's skill folder: no Cursor profile yet (its trajectories come through Harbor)
    "~/skills",  # a skills folder in the agent's home, where an agent with no native folder may copy skills
)
"""Skill folders no one harness owns, read after every profile's (and the trial's own skills dir)."""


@dataclass(frozen=True)
class HarnessProfile:
    """One harness: what the study config needs to run it, and the facts the graders read.

    ``import_path`` (``module:Class``, a Harbor ``BaseAgent``) or ``agent`` (a Harbor agent
    name) says what runs; ``requires_model`` whether it calls a model; ``cli`` an npm CLI
    from ``aces-bench agents install``; ``bundled_skills`` whether the skills the CLI
    ships with stay listed. ``turn_limit`` names the agent kwarg that caps its turns (a
    trigger run sets it), ``skill_roots`` where it finds skills in a trial,
    ``skill_configs`` the files where it turns skills on or off (a write there is a skill
    change, ``graders/self_correction``), ``api`` the wire API it speaks to the model
    (``anthropic``, ``openai-responses``, ``openai-chat``) and ``other_apis`` those it also
    speaks, by the model's provider (``agents/endpoints.check_api`` refuses a model of
    another family). ``appends_v1`` says whether its client adds ``/v1/<path>`` to the
    base URL itself (``always``: the Anthropic SDKs; ``anthropic``: for Anthropic models
    only, litellm's Anthropic route; ``never``: it is handed ``host/v1``,
    ``agents/endpoints.harness_base_url``). ``plugin_parts`` are the parts of a staged
    plugin folder it reads (claude-code's ``--plugin-dir`` reads them all; a harness
    without plugin support reads a plugin's skills, from the skills dir).
    ``lists_skills_in_trajectory``: its ATIF trajectory's first user message lists the
    skills its model was shown in an ``<available_skills>`` block, read when the agent's
    result does not record them (``agents/traces.shown_skills``).

    ``tool_kinds`` maps each tool name the harness gives its model (any case) to a kind in
    ``TOOL_KINDS``; a trajectory whose ATIF ``agent.name`` is one of ``agent_names``
    (default: ``name``) is graded by this profile's kinds first. ``skill_roots`` and
    ``skill_configs`` are paths in which ``**/`` stands for any leading folders, ``*`` for
    one folder name and a leading ``~/`` for a home folder (``~``, ``/root``,
    ``/home/<user>``). ``paper_label`` is the harness's name in the ACES paper's tables.
    ``runnable=False`` marks a grading-only profile (no ``harness=`` option).
    """

    name: str
    import_path: str | None = None
    agent: str | None = None
    requires_model: bool = True
    label: str = ""
    cli: str | None = None
    bundled_skills: str = "off"
    kwargs: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    turn_limit: str | None = None
    skill_roots: tuple[str, ...] = ()
    skill_configs: tuple[str, ...] = ()
    tool_kinds: dict[str, str] = field(default_factory=dict)
    api: str | None = None
    other_apis: tuple[str, ...] = ()
    agent_names: tuple[str, ...] = ()
    paper_label: str | None = None
    runnable: bool = True
    appends_v1: Literal["never", "always", "anthropic"] = "never"
    plugin_parts: tuple[str, ...] = ("skills",)
    lists_skills_in_trajectory: bool = False

    def __post_init__(self) -> None:
        bad = {tool: kind for tool, kind in self.tool_kinds.items() if kind not in TOOL_KINDS}
        if bad:
            raise ValueError(f"harness profile {self.name!r}: unknown tool kind(s) {bad} (use one of: {', '.join(TOOL_KINDS)})")
        apis = [a for a in (self.api, *self.other_apis) if a is not None and a not in WIRE_APIS]
        if apis or (self.other_apis and self.api is None):
            raise ValueError(f"harness profile {self.name!r}: api/other_apis {apis or list(self.other_apis)} "
                             f"(use one of: {', '.join(WIRE_APIS)}; other_apis only beside api)")

    @property
    def atif_names(self) -> tuple[str, ...]:
        """The ATIF ``agent.name`` values of this harness's trajectories."""
        return self.agent_names or (self.name,)

    def config(self) -> dict[str, Any]:
        """The ``harness`` config group's fields (``config.schema.HarnessConf``)."""
        return {"name": self.name, "import_path": self.import_path, "agent": self.agent,
                "requires_model": self.requires_model, "label": self.label or self.name, "cli": self.cli,
                "bundled_skills": self.bundled_skills, "kwargs": dict(self.kwargs), "env": dict(self.env)}


HARNESSES: Registry[HarnessProfile] = Registry("harness", where="harness")


_derived: dict[str, tuple[int, object]] = {}


def _cached(key: str, build):
    seen = _derived.get(key)
    if seen is None or seen[0] != HARNESSES.version:
        HARNESSES.names()  # plugins first
        seen = _derived[key] = (HARNESSES.version, build())
    return seen[1]


def is_builtin(name: str) -> bool:
    """Whether ``name`` is registered with aces-bench's own profile (not a plugin's, nor one a plugin put in its place)."""
    path = BUILTINS.get(name)
    return path is not None and name in HARNESSES and HARNESSES.get(name) is load_path(path)


def _profiles() -> list[HarnessProfile]:
    """Every profile, the built-ins first: where two claim a tool name, a built-in's kind wins."""
    return [p for _, p in sorted(HARNESSES.items(), key=lambda item: not is_builtin(item[0]))]


def _kinds(profiles: Iterable[HarnessProfile]) -> dict[str, str]:
    table: dict[str, str] = {}
    for p in profiles:
        for tool, kind in p.tool_kinds.items():
            table.setdefault(tool.lower(), kind)
    return table


def _tables() -> tuple[dict[str, dict[str, str]], dict[str, str], dict[str, str]]:
    profiles = _profiles()
    by_agent: dict[str, dict[str, str]] = {}
    for p in profiles:
        for agent in p.atif_names:
            by_agent.setdefault(agent, _kinds([p]))
    return by_agent, _kinds(profiles), {t.lower(): k for t, k in GENERIC_TOOL_KINDS.items()}


def tool_kind(tool: str, agent: str | None = None) -> str:
    """The kind of tool ``tool`` in a trajectory of ATIF agent ``agent``.

    Looked up, by the exact name (any case) and then by its last ``.``/``:``/``/`` part
    (``functions.bash``, ``developer.text_editor``): in the profile of the trajectory's
    own agent first; then in every profile, the built-ins' kinds before a plugin's (an
    agent no profile names, or a tool its profile does not list); then in the short
    generic table (``GENERIC_TOOL_KINDS``); else ``other``. A plugin that claims a
    built-in harness's tool name with another kind therefore changes only trajectories of
    its own agent."""
    by_agent, union, generic = _cached("tools", _tables)
    low = tool.lower()
    tail = re.split(r"[.:/]", low)[-1]
    for table in (by_agent.get(agent or "", {}), union, generic):
        if low in table:
            return table[low]
        if table.get(tail, "editor") != "editor":  # an editor tool by its whole name only
            return table[tail]
    return "other"


_HOME = r"(?:~|/root|/home/[^/]+)"


def path_regex(pattern: str, *, any_prefix: str) -> str:
    """A profile path (``**/`` any leading folders, ``*`` one folder name, leading ``~/`` a home) as a regex."""
    path = posixpath.normpath(pattern) if "**" not in pattern else pattern
    out = ""
    if path.startswith("**/"):
        out, path = any_prefix, path[3:]
    elif path == "~" or path.startswith("~/"):
        out, path = _HOME, path[1:]
    return out + "[^/]+".join(re.escape(part) for part in path.split("*"))


def profile_skill_roots() -> tuple[str, ...]:
    """Every registered profile's skill folders inside a trial, then ``GENERIC_SKILL_ROOTS``, as regexes."""
    def build():
        roots = [root for p in _profiles() for root in p.skill_roots] + list(GENERIC_SKILL_ROOTS)
        return tuple(dict.fromkeys(path_regex(root, any_prefix=r"[^\s'\"]*?/") for root in roots))
    return _cached("roots", build)


def profile_skill_configs() -> re.Pattern[str] | None:
    """One regex matching (whole) every registered profile's skill config file; None when no profile has one."""
    def build():
        parts = list(dict.fromkeys(path_regex(c, any_prefix="(?:.*/)?") for p in _profiles() for c in p.skill_configs))
        return re.compile("|".join(f"(?:{part})" for part in parts)) if parts else None
    return _cached("configs", build)


def profile_turn_limit(*names: str | None) -> str | None:
    """The turn-limit kwarg of the first registered harness among ``names``, if it has one."""
    for name in names:
        if name and name in HARNESSES:
            return HARNESSES.get(name).turn_limit
    return None


def profile_running(cli: str | None, agent: str | None = None) -> HarnessProfile | None:
    """The profile of the harness that runs npm CLI ``cli``, else (no CLI) of the one running Harbor
    agent ``agent`` without a CLI; None when no registered profile does."""
    for _, profile in HARNESSES.items():
        if (cli and profile.cli == cli) or (not cli and agent and profile.cli is None and profile.agent == agent):
            return profile
    return None


def profile_named(name: str | None) -> HarnessProfile | None:
    """The registered profile ``name`` (a harness name, or the Harbor agent a profile runs), or None."""
    if name and name in HARNESSES:
        return HARNESSES.get(name)
    return None


def trajectory_listers() -> frozenset[str]:
    """The ATIF agent names whose trajectories list the skills shown (``lists_skills_in_trajectory``)."""
    return _cached("listers", lambda: frozenset(a for p in _profiles() if p.lists_skills_in_trajectory
                                                for a in p.atif_names))


def paper_harness(label: str) -> str:
    """The harness a label of the ACES paper's tables names (``Claude Code`` -> ``claude-code``), else the label."""
    labels = _cached("paper", lambda: {p.paper_label: p.name for p in _profiles() if p.paper_label})
    return labels.get(label, label)


BUILTINS: dict[str, str] = {
    name: f"aces_bench.agents.builtins:{attr}" for name, attr in (
        ("reference", "REFERENCE"), ("terminus-2", "TERMINUS_2"), ("claude-code", "CLAUDE_CODE"), ("codex", "CODEX"),
        ("opencode", "OPENCODE"), ("gemini-cli", "GEMINI_CLI"), ("deerflow", "DEERFLOW"), ("trae-agent", "TRAE_AGENT"),
        ("mini-swe-agent", "MINI_SWE_AGENT"))
}
"""The built-in harnesses (``aces_bench/agents/builtins.py`` holds them and says where each fact comes from)."""

# Registered the way a plugin registers its own; by import path, so listing them imports nothing.
for _name, _path in BUILTINS.items():
    HARNESSES.register(_name, _path)
