"""Finding 3: an author grader (``grading=aces_plus_custom``) runs in a sandbox of its own.

The grader below tries what the attack did on the host: read the operator's key from
its environment, read a host file, write outside its folder and into the retained
workspace, reach the host over the network, read /etc/shadow. Each attempt is
reported back in its verdict, which must come back as plain data.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest
from support import grading
from support.studies import needs_bwrap

from aces_bench.cases import EvalCase
from aces_bench.graders.author import AuthorContext, discover_author_graders, run_author_graders

ROOT = Path(__file__).resolve().parents[2]

KEY = "sk-canary-author-grader-0123456789abcdef"

GRADER = """
import json, os, socket, sys
found = {"key": os.environ.get("OPENAI_API_KEY"), "env_names": sorted(os.environ)}
def attempt(name, fn):
    try:
        found[name] = fn()
    except OSError as exc:
        found[name] = "refused: " + type(exc).__name__
attempt("host_file", lambda: open(HOST_FILE).read())
attempt("write_outside", lambda: open(ESCAPE, "w").write("x"))
attempt("write_workspace", lambda: open(os.path.join(os.environ["ACES_WORKSPACE"], "answer.txt"), "w").write("x"))
attempt("write_skill", lambda: open(os.path.join(os.environ["ACES_SKILL_DIR"], "planted"), "w").write("x"))
attempt("shadow", lambda: open("/etc/shadow").read())
def connect():
    s = socket.socket(); s.settimeout(2); s.connect(("127.0.0.1", PORT)); return "connected"
attempt("network", connect)
attempt("scratch", lambda: open(os.path.join(os.environ["TMPDIR"], "ok"), "w").write("fine") and "written")
print(json.dumps({"score": 1, "details": found}))
"""


@needs_bwrap
@pytest.mark.timeout(120)
def test_an_author_grader_sees_no_host_and_writes_only_its_result(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    host_file = tmp_path / "host-secret.txt"
    host_file.write_text("host secret\n")
    escape = tmp_path / "escaped.txt"
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    gs = grading
    body = (GRADER.replace("HOST_FILE", repr(str(host_file))).replace("ESCAPE", repr(str(escape)))
            .replace("PORT", str(port)))
    skill = gs.skill_with_graders(tmp_path, {"probe.py": body})
    ws = tmp_path / "retained"
    ws.mkdir()
    (ws / "answer.txt").write_text("total 1400.07")
    case = EvalCase.model_validate({"id": "explicit-1", "prompt": "p", "expected_skill": gs.SKILL})
    ctx = AuthorContext(skill=gs.SKILL, skill_dir=skill, case=case, case_id=case.id, condition="with_skill",
                        trial_name="t__1", reward=1.0, workspace=ws, trajectory_path=None, final_answer="x")
    result = asyncio.run(run_author_graders(discover_author_graders(skill), ctx))["author:probe"]
    server.close()
    assert result.score == 1.0, result
    seen = result.details["details"]
    assert seen["key"] is None
    assert not [n for n in seen["env_names"] if "KEY" in n or "TOKEN" in n or "SECRET" in n]
    for attempt in ("host_file", "write_outside", "write_workspace", "write_skill", "shadow", "network"):
        assert str(seen[attempt]).startswith("refused"), (attempt, seen[attempt])
    assert seen["scratch"] == "written", "its own scratch dir is writable"
    assert not escape.exists() and not (skill / "planted").exists()
    assert (ws / "answer.txt").read_text() == "total 1400.07"
    assert KEY not in json.dumps(result.model_dump(mode="json"))
