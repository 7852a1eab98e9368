"""Tool-call normalisation across harnesses, the shell reader, and redaction."""

from __future__ import annotations

import pytest
from support.graders import AWS_KEY, tool, traj

from aces_bench.graders.redact import redact, redact_value, snippet
from aces_bench.graders.shell import parse_command
from aces_bench.graders.tool_calls import build_view, skill_ref


def one(call):
    return build_view(traj(call), "/workspace").calls[0]


@pytest.mark.parametrize(
    ("call", "kind", "exit_code", "failed", "source"),
    [
        (tool("run_shell_command", {"command": "python3 a.py"}, "Output: boom\nError: (none)\nExit Code: 1\nSignal: 0"),
         "shell", 1, True, "exit_code"),
        (tool("Bash", {"command": "ls"}, "[stdout]\nx\n\n[exit_code] 2"), "shell", 2, True, "exit_code"),
        (tool("Bash", {"command": "ls"}, "x", {"tool_result_is_error": True}), "shell", None, True, "flag"),
        (tool("exec_command", {"cmd": ["bash", "-lc", "cat /skills/s/SKILL.md"]}, '{"output": "x", "metadata": {"exit_code": 0}}'),
         "shell", 0, False, "exit_code"),
        (tool("bash_command", {"keystrokes": "python3 x.py\n", "duration": 1}, "Traceback (most recent call last):"),
         "shell", None, True, "inferred"),
        (tool("bash_command", {"keystrokes": "ls\n", "duration": 1}, "a b c"), "shell", None, None, "none"),
        (tool("read_file", {"file_path": "/workspace/x"}, "Error: File not found"), "read", None, True, "flag"),
        (tool("Read", {"file_path": "/workspace/x"}, "1\tline"), "read", None, False, "none"),
        (tool("TodoWrite", {"todos": []}, "ok"), "control", None, False, "none"),
    ],
)
def test_status_and_kind_across_harnesses(call, kind, exit_code, failed, source):
    c = one(call)
    assert (c.kind, c.exit_code, c.failed, c.status_source) == (kind, exit_code, failed, source)


def test_codex_bash_lc_command_is_unwrapped():
    c = one(tool("shell", {"command": ["bash", "-lc", "cat /skills/s/SKILL.md"]}, "x"))
    assert c.text == "cat /skills/s/SKILL.md" and c.reads == ("/skills/s/SKILL.md",)


def test_apply_patch_paths_and_written_text():
    patch = "*** Begin Patch\n*** Update File: /skills/s/scripts/run.py\n@@\n-a\n+b\n*** End Patch"
    c = one(tool("apply_patch", {"input": patch}, "Done"))
    assert c.kind == "edit" and c.writes == ("/skills/s/scripts/run.py",)
    w = one(tool("Write", {"file_path": "notes.md", "content": "hello"}, "ok"))
    assert w.writes == ("/workspace/notes.md",) and w.written == "hello"


def test_cwd_persists_across_shell_calls():
    view = build_view(traj(tool("bash", {"command": "cd /skills/s"}), tool("bash", {"command": "cat SKILL.md"})), "/workspace")
    assert view.calls[1].reads == ("/skills/s/SKILL.md",)


@pytest.mark.parametrize(
    ("cmd", "field", "expected"),
    [
        ("cd /skills/s && head -n 40 SKILL.md | grep -i usage", "reads", ("/skills/s/SKILL.md",)),
        ("python3 -m pip install pandas", "flags", frozenset({"install"})),
        ("ls -lh /workspace", "flags", frozenset()),
        ("./scripts/run.sh -h", "flags", frozenset({"help"})),
        ("uv run /skills/s/scripts/x.py a", "execs", ("/skills/s/scripts/x.py",)),
        ("cat > /skills/s/a.py <<'EOF'\nx = 1 > 2\nEOF\npython3 /skills/s/a.py", "writes", ("/skills/s/a.py",)),
        ("sed -i 's/a/b/' SKILL.md", "writes", ("/w/SKILL.md",)),
        ("cp a.txt ~/.bashrc", "writes", ("~/.bashrc",)),
        ("grep -rn TODO src", "reads", ("/w/src",)),
        ("find /skills -name SKILL.md", "lists", ("/skills",)),
        ("echo hi 2>/dev/null > out.txt", "writes", ("/w/out.txt",)),
    ],
)
def test_shell_reader(cmd, field, expected):
    assert getattr(parse_command(cmd, "/w"), field) == expected


def test_skill_ref_roots():
    assert skill_ref("/skills/a/SKILL.md", "/skills").skill == "a"
    assert skill_ref("/custom/a/x.py", "/custom").rel == "x.py"
    for p in ("~/.claude/skills/a/SKILL.md", "/root/.gemini/skills/a/SKILL.md", "/home/u/.config/opencode/skills/a/x",
              "/runtime/skills/a/SKILL.md", "/workspace/.claude/skills/a/SKILL.md"):
        assert skill_ref(p, "/skills").skill == "a", p
    assert skill_ref("/workspace/data/a.csv", "/skills") is None and skill_ref("/skills", "/skills") is None


def test_redact_masks_secrets_and_keeps_context():
    key = "sk-proj-" + "Ab3" * 10
    text = f"export OPENAI_API_KEY={key}\naws id {AWS_KEY} and password = \"hunter2hunter\""
    out = redact(text)
    assert key not in out and AWS_KEY not in out and "hunter2hunter" not in out
    assert "[REDACTED:secret.llm_api_key]" in out and "[REDACTED:secret.aws_access_key]" in out
    assert 'password = "[REDACTED:secret.assignment]"' in out
    assert redact("nothing to hide") == "nothing to hide"


def test_redact_private_key_body_and_nested_values():
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1x2y3z\nQWERTYUIOP\n-----END RSA PRIVATE KEY-----"
    out = redact_value({"a": [pem, {"b": AWS_KEY}], "n": 3})
    assert "MIIEowIBAAKCAQEA1x2y3z" not in str(out) and AWS_KEY not in str(out) and out["n"] == 3


def test_snippet_never_cuts_a_secret_in_half():
    text = "x" * 100 + " " + AWS_KEY + " " + "y" * 100
    s = snippet(text, 10, 12, width=95)
    assert AWS_KEY[:8] not in s
