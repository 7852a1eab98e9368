"""Harbor's installed agents, run from a CLI already on PATH (see :mod:`aces_bench.agents.clis`).

Harbor's claude-code and codex skip their network install when their CLI is on PATH;
its opencode always installs Node and ``opencode-ai`` from the network. ``OpenCode``
here does the same check first, so a provisioned CLI is used as is; without one it
falls back to Harbor's own install (which needs network: Docker or a cloud backend).

``ClaudeCode`` is Harbor's claude-code agent that also loads every plugin a task stages
under ``/plugins/<name>/`` (``skill.intervention=plugin``) with the CLI's own
``--plugin-dir``: its commands, agents, hooks, MCP servers and skills, as a user who
installed the plugin has them. A plugin's skills then come with the plugin (named
``<plugin>:<skill>``) and are not copied again from the skills dir. A task without
plugins runs exactly as Harbor's agent does.
"""

from __future__ import annotations

import shlex

from harbor.agents.installed.claude_code import ClaudeCode as HarborClaudeCode
from harbor.agents.installed.opencode import OpenCode as HarborOpenCode
from harbor.environments.base import BaseEnvironment

IMPORT_PATH_OPENCODE = "aces_bench.agents.installed:OpenCode"
IMPORT_PATH_CLAUDE_CODE = "aces_bench.agents.installed:ClaudeCode"
PLUGINS_DIR = "/plugins"
"""Where a task stages whole plugins (``emitters``); the same path in every sandbox."""


class ClaudeCode(HarborClaudeCode):
    """Harbor's claude-code agent that loads the task's staged plugins with ``--plugin-dir``."""

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


class OpenCode(HarborOpenCode):
    """Harbor's opencode agent that uses an ``opencode`` already on PATH."""

    async def install(self, environment: BaseEnvironment) -> None:
        probe = await environment.exec(command="command -v opencode && opencode --version")
        if probe.return_code == 0:
            self.logger.debug(f"opencode is already on PATH: {(probe.stdout or '').strip()}")
            return
        await super().install(environment)
