"""`aces-bench agents`: the pinned npm CLIs, their cache and the errors a user sees."""

from __future__ import annotations

import pytest

from aces_bench.agents import clis
from aces_bench.core.errors import ConfigError, RunError


def test_unknown_cli_lists_the_valid_ones():
    with pytest.raises(ConfigError, match=r"unknown agent CLI 'claud'") as err:
        clis.main(["install", "claud"])
    assert "use one of: claude-code, codex, opencode" in str(err.value)


def test_a_missing_cli_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv(clis.CACHE_ENV, str(tmp_path))
    with pytest.raises(RunError) as err:
        clis.installed("codex")
    message = str(err.value)
    assert "the codex CLI (@openai/codex@0.171.0) is not installed in the agent cache" in message
    assert "run `aces-bench agents install codex` (or `make agents`)" in message
    assert str(tmp_path / "codex-0.171.0") in message


def test_list_shows_package_version_and_state(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(clis.CACHE_ENV, str(tmp_path))
    manifest = clis.CliManifest(name="codex", package="@openai/codex", version="0.171.0", binary="codex",
                                version_output="codex-cli 0.171.0", installed_at="2026-12-01T00:00:00Z")
    (tmp_path / "codex-0.171.0").mkdir()
    (tmp_path / "codex-0.171.0" / clis.MANIFEST).write_text(manifest.model_dump_json())
    assert clis.main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("codex") and "@openai/codex@0.171.0" in line and " installed " in line for line in lines)
    assert any(line.startswith("claude-code") and "not installed" in line for line in lines)
    assert clis.installed("codex")[1].bin_dir.as_posix() == "/opt/aces-agents/codex/node_modules/.bin"
