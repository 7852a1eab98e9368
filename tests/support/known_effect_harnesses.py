"""The two harnesses the known-effect suite runs: the reference agent, and terminus-2
driven by the scripted model (``support/terminus_model.py``) on the loopback model server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from unittest import mock

from support.known_effect import GateOutcome, SuiteRun, run_suite, run_verdict_suite
from support.model_server import ModelServer
from support.terminus_model import terminus_model

REFERENCE = ("harness=reference",)
# Requests per trial: read SKILL.md, run, maybe fall back, mark, confirm (and a wait).
MAX_REQUESTS = 400


def bwrap_missing() -> str | None:
    """Why the suite cannot run here, or None."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed; the known-effect suite runs real trials on the local backend"
    return None


def run_reference(out: Path, root_parent: Path | None = None) -> SuiteRun:
    return run_suite(REFERENCE, out, label="reference", root_parent=root_parent)


def run_terminus(out: Path, root_parent: Path | None = None) -> tuple[SuiteRun, ModelServer]:
    """The suite on terminus-2; returns the run and the server (its request record)."""
    # litellm wants some key even for a keyless loopback server.
    with mock.patch.dict(os.environ, {"OPENAI_API_KEY": "sk-known-effect", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                                      "HARBOR_TELEMETRY": "0"}), \
            ModelServer(terminus_model, max_requests=MAX_REQUESTS, idle_timeout=600) as server:
        harness = ("harness=terminus-2", "model=openai-compatible", "model.name=openai/scripted-model",
                   f"model.base_url={server.base_url}")
        run = run_suite(harness, out, label="terminus-2", root_parent=root_parent)
    return run, server


def run_reference_verdicts(out: Path, root_parent: Path | None = None) -> dict[str, GateOutcome]:
    return run_verdict_suite(REFERENCE, out, root_parent=root_parent)


def run_terminus_verdicts(out: Path, root_parent: Path | None = None) -> tuple[dict[str, GateOutcome], ModelServer]:
    """The issue-22 skills on terminus-2 driven by the scripted model; returns the outcomes and the server."""
    with mock.patch.dict(os.environ, {"OPENAI_API_KEY": "sk-known-effect", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                                      "HARBOR_TELEMETRY": "0"}), \
            ModelServer(terminus_model, max_requests=MAX_REQUESTS, idle_timeout=600) as server:
        harness = ("harness=terminus-2", "model=openai-compatible", "model.name=openai/scripted-model",
                   f"model.base_url={server.base_url}")
        outcomes = run_verdict_suite(harness, out, root_parent=root_parent, crash_timeout=None)
    return outcomes, server
