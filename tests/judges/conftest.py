"""Fixtures for the judge tests: a scripted local OpenAI-compatible server per test."""

from __future__ import annotations

import pytest
from support.judges import ScriptedServer, start_server


@pytest.fixture
def llm_server():
    """(state, base_url): push ``Reply`` objects onto ``state`` to script the server."""
    state = ScriptedServer()
    server, base_url = start_server(state)
    try:
        yield state, base_url
    finally:
        server.timer.cancel()
        server.shutdown()
        server.server_close()
