"""Harbor's installed agents, run from a CLI already on PATH (see :mod:`aces_bench.agents.clis`).

Harbor's claude-code and codex skip their network install when their CLI is on PATH;
its opencode always installs Node and ``opencode-ai`` from the network. ``OpenCode``
here does the same check first, so a provisioned CLI is used as is; without one it
falls back to Harbor's own install (which needs network: Docker or a cloud backend).
"""

from __future__ import annotations

from harbor.agents.installed.opencode import OpenCode as HarborOpenCode
from harbor.environments.base import BaseEnvironment

IMPORT_PATH_OPENCODE = "aces_bench.agents.installed:OpenCode"


class OpenCode(HarborOpenCode):
    """Harbor's opencode agent that uses an ``opencode`` already on PATH."""

    async def install(self, environment: BaseEnvironment) -> None:
        probe = await environment.exec(command="command -v opencode && opencode --version")
        if probe.return_code == 0:
            self.logger.debug(f"opencode is already on PATH: {(probe.stdout or '').strip()}")
            return
        await super().install(environment)
