"""The built-in harness profiles, registered in ``HARNESSES`` by ``agents/profiles.py`` exactly as a plugin registers its own.

Each profile's tool names come from material this project did not write:

- claude-code, codex, opencode: the ``tools`` each pinned npm CLI (``aces-bench agents
  install``) sends to the model, captured from the real CLI by
  ``tests/agents/test_agents_profile_tools.py``, which fails when a name it sends has no
  kind here; plus names in the pinned CLI binaries the captured run did not offer
  (claude-code's WebFetch/WebSearch, which Harbor disallows; older or model-dependent
  tools).
- terminus-2: the ``function_name``s Harbor's own agent writes (``harbor/agents/terminus_2``).
- reference: the one tool of ``agents/reference.py``.
- gemini-cli (grading only): its real SkillsBench trajectories (``tests/golden/real_grades``,
  ``../shared/data/skillsbench``), Harbor's ``installed/gemini_cli.py`` (the web tools) and
  the Gemini CLI tool table of obra/superpowers' ``using-superpowers`` skill.
- mini-swe-agent (grading only): the ATIF converter of Harbor's ``installed/mini_swe_agent.py``.
- deerflow, trae-agent (grading only): the tool lists Harbor's installed agents configure
  (``installed/deerflow.py``, ``installed/trae_agent.py``). Harbor 0.25's trae-agent writes
  an ATIF trajectory named ``trae-agent``; its deerflow writes none, so the deerflow
  profile only says what those names mean to any agent that uses them (the union).

A grading-only profile (``runnable=False``) is no ``harness=`` option of its own; those
harnesses run only as Harbor installed agents (``harness=harbor harness.agent=gemini-cli``
with a container backend, untried here), and their trajectories are graded with these facts.

How a runnable built-in runs stays in ``conf/harness/<name>.yaml``; ``cli`` and
``import_path``/``agent`` are repeated here and a test holds them equal to the YAML.
"""

from __future__ import annotations

from aces_bench.agents.profiles import HarnessProfile, named_kinds

REFERENCE = HarnessProfile(
    name="reference", import_path="aces_bench.agents.reference:ReferenceAgent", requires_model=False,
    label="reference agent (deterministic, non-LLM)", agent_names=("aces-reference",),
    tool_kinds=named_kinds(shell="bash"),
)

TERMINUS_2 = HarnessProfile(
    name="terminus-2", agent="terminus-2", label="terminus-2 (Harbor agent)", turn_limit="max_turns",
    paper_label="Terminus-2",
    # litellm's Anthropic route appends /v1/messages; its OpenAI route wants host/v1.
    appends_v1="anthropic",
    # Harbor's agent writes the <available_skills> block into its first user message.
    lists_skills_in_trajectory=True,
    tool_kinds=named_kinds(shell="bash_command", control="mark_task_complete"),
)

CLAUDE_CODE = HarnessProfile(
    name="claude-code", import_path="aces_bench.agents.installed:ClaudeCode", cli="claude-code",
    label="claude-code (Harbor agent)", turn_limit="max_turns", api="anthropic", paper_label="Claude Code",
    appends_v1="always",  # the Anthropic SDK appends /v1/messages to the base URL
    # --plugin-dir loads a whole plugin: its skills, commands, agents, hooks, MCP servers and the rest.
    plugin_parts=("skills", "commands", "agents", "hooks", "mcp", "other"),
    # $CLAUDE_CONFIG_DIR/skills (Harbor sets CLAUDE_CONFIG_DIR=/logs/agent/sessions), .claude/skills anywhere.
    skill_roots=("**/.claude/skills", "/logs/agent/sessions/skills"),
    skill_configs=("**/.claude/settings.json", "**/.claude/settings.local.json"),
    tool_kinds=named_kinds(
        shell="Bash", read="Read NotebookRead", write="Write", edit="Edit MultiEdit NotebookEdit", list="Glob",
        search="Grep", activate="Skill", web="WebFetch WebSearch",
        # Agent launches a subagent (Task's successor); Workflow runs a script of subagents
        # (its ``script`` is JavaScript, never a shell command).
        delegate="Task Agent Workflow",
        # TaskCreate/Get/List/Update keep the session's task list (TodoWrite's successor).
        control="TodoWrite TaskCreate TaskGet TaskList TaskUpdate",
        # TaskOutput/TaskStop read or stop a background task; the rest schedule, message or report.
        other="CronCreate CronDelete CronList EnterWorktree ExitWorktree ReportFindings ScheduleWakeup "
              "SendMessage TaskOutput TaskStop",
    ),
)

CODEX = HarnessProfile(
    name="codex", import_path="aces_bench.agents.installed:Codex", cli="codex", label="codex (Harbor agent)",
    api="openai-responses", paper_label="Codex",
    skill_roots=("**/.codex/skills", "**/.agents/skills"),
    skill_configs=("**/.codex/config.toml", "**/.agents/config.toml", "**/.agents/config.json"),
    tool_kinds=named_kinds(
        shell="exec_command shell shell_command", read="view_image", edit="apply_patch", web="web_search",
        delegate="spawn_agent", control="update_plan get_goal create_goal update_goal",
        # write_stdin types into a running exec_command session (no command of its own); the
        # multi_agent_v1 namespace's other tools talk to an agent spawn_agent started.
        other="write_stdin request_user_input close_agent resume_agent send_input wait_agent",
    ),
)

OPENCODE = HarnessProfile(
    name="opencode", import_path="aces_bench.agents.installed:OpenCode", cli="opencode",
    label="opencode (Harbor agent)", api="anthropic", other_apis=("openai-responses", "openai-chat"),
    paper_label="OpenCode",
    # opencode also reads .claude/skills and .agents/skills (both claimed by claude-code and codex).
    skill_roots=("**/.opencode/skills", "**/.config/opencode/skills"),
    skill_configs=("**/opencode.json", "**/opencode.jsonc"),
    tool_kinds=named_kinds(
        shell="bash", read="read", write="write", edit="edit patch apply_patch", list="glob list", search="grep",
        activate="skill", web="webfetch websearch", delegate="task", control="todowrite",
    ),
)

GEMINI_CLI = HarnessProfile(
    name="gemini-cli", agent="gemini-cli", label="gemini-cli (graded only)", runnable=False,
    skill_roots=("**/.gemini/skills",),
    skill_configs=("**/.gemini/settings.json",),
    tool_kinds=named_kinds(
        shell="run_shell_command", read="read_file read_many_files", write="write_file", edit="replace",
        list="list_directory glob", search="search_file_content grep_search", activate="activate_skill",
        web="google_web_search web_fetch", delegate="invoke_agent", control="write_todos exit_plan_mode",
    ),
)

DEERFLOW = HarnessProfile(
    name="deerflow", agent="deerflow", label="deerflow (graded only)", runnable=False,
    tool_kinds=named_kinds(shell="bash", read="read_file", write="write_file", edit="str_replace", list="ls glob",
                      search="grep", web="web_search web_fetch"),
)

MINI_SWE_AGENT = HarnessProfile(
    name="mini-swe-agent", agent="mini-swe-agent", label="mini-swe-agent (graded only)", runnable=False,
    tool_kinds=named_kinds(shell="bash"),  # its one tool; Harbor's converter names a call "bash" when unnamed
)

TRAE_AGENT = HarnessProfile(
    name="trae-agent", agent="trae-agent", label="trae-agent (graded only)", runnable=False,
    tool_kinds=named_kinds(shell="bash", editor="str_replace_based_edit_tool"),
)
