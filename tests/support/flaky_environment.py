"""A local sandbox environment that fails to start the first N times per task, as an
environment that could not start (an image pull, a full host) does: for the tests of
infrastructure retries (``aces_bench.run.attempts``, ``aces_bench.run.collect.classify``).

Selected with ``backend.import_path=support.flaky_environment:FlakyStartEnvironment`` (tests/
is on sys.path in the test process); ``ACES_TEST_FLAKY_DIR`` is where the start attempts
are counted and ``ACES_TEST_FLAKY_FAILURES`` how many fail per task.
"""

from __future__ import annotations

import os
from pathlib import Path

from aces_bench.backends.local import LocalSandboxEnvironment


class SimulatedStartError(RuntimeError):
    """The environment did not come up (nothing of the agent or a skill has run)."""


class FlakyStartEnvironment(LocalSandboxEnvironment):
    async def start(self, force_build: bool) -> None:
        task = self.environment_name.replace("/", "_")
        counter = Path(os.environ["ACES_TEST_FLAKY_DIR"]) / task
        counter.parent.mkdir(parents=True, exist_ok=True)
        starts = int(counter.read_text()) if counter.is_file() else 0
        counter.write_text(str(starts + 1))
        if starts < int(os.environ.get("ACES_TEST_FLAKY_FAILURES", "1")):
            raise SimulatedStartError(f"simulated: the environment of {task} did not start (start {starts + 1})")
        await super().start(force_build)
