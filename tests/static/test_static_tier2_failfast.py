"""Tier 2 fails fast and loud: one probe request per judge before the corpus; a dead
endpoint or a missing key stops the scan with an error and exit 2 (unless
--tier2-partial); two judges report their agreement (ICC, weighted kappa) and warn
when it is low. Judges are real litellm judges talking to loopback servers."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.model_server import ModelServer, say

from aces_bench.static.cli import main
from aces_bench.static.rubric import CRITERIA

SKILLS = {f"skill-{c}": base for c, base in zip("abcdef", (2, 3, 5, 6, 8, 9), strict=True)}
PROBE = 'Reply with {"ok": true}.'


def _corpus(root: Path) -> Path:
    for name in SKILLS:
        d = root / name
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Converts CSV files for {name} reports. Use when a report is due.\n---\n"
            f"# {name}\n\n## Instructions\n1. Run `convert data.csv`.\n2. Check the output; on an error, fix the header.\n",
            encoding="utf-8",
        )
    return root


def _dead_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_dead_endpoint_stops_before_the_corpus(tmp_path, capsys):
    root = _corpus(tmp_path / "skills")
    url = f"http://127.0.0.1:{_dead_port()}/v1"
    out = subprocess.run(
        [sys.executable, "-m", "aces_bench.cli", "scan", str(root), "--no-lint", "--quiet", "--judge-model",
         "openai/judge-a", "--judge-base-url", url, "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 2, out
    err = out.stderr.strip().splitlines()
    assert err[0].startswith("error: --judge-model: Tier 2 judge litellm:openai/judge-a did not answer the probe request: "), err
    assert err[1].strip().startswith("fix: check --judge-base-url") and len(err) == 2, err
    assert "Traceback" not in out.stderr and out.stdout == ""
    assert not (tmp_path / "out").exists(), "nothing is written when the judge is unreachable"

    code = main([str(root), "--no-lint", "--quiet", "--judge-model", "openai/judge-a", "--judge-base-url", url,
                 "--tier2-partial"])
    assert code == 0
    assert "Tier 2 rubric: not run (no judge answered the probe request: litellm:openai/judge-a:" in capsys.readouterr().out


class _Unavailable(BaseHTTPRequestHandler):
    hits = 0

    def do_POST(self):  # noqa: N802 - http.server's name
        type(self).hits += 1
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = b'{"error": {"message": "overloaded", "type": "server_error"}}'
        self.send_response(503)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_failing_endpoint_gets_one_probe_and_no_retries(tmp_path, capsys):
    """A 503 is retried up to max_retries on every skill in a rating; the probe sends one request."""
    root = _corpus(tmp_path / "skills")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Unavailable)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        code = main([str(root), "--no-lint", "--quiet", "--judge-model", "openai/judge-a",
                     "--judge-base-url", f"http://127.0.0.1:{httpd.server_address[1]}/v1"])
    finally:
        httpd.shutdown()
    err = capsys.readouterr().err
    assert code == 2 and "did not answer the probe request: judge call failed after 1 attempt(s): ServiceUnavailableError" in err, err
    assert _Unavailable.hits == 1


def test_missing_key_stops_with_the_variable_named(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ACES_TEST_NO_SUCH_KEY", raising=False)
    root = _corpus(tmp_path / "skills")
    code = main([str(root), "--no-lint", "--quiet", "--judge-model", "openai/gpt-4o-mini",
                 "--judge-api-key-env", "ACES_TEST_NO_SUCH_KEY"])
    err = capsys.readouterr().err
    assert code == 2
    assert "ACES_TEST_NO_SUCH_KEY, which is not set in the environment" in err.splitlines()[0]


def _rubric_reply(request, *, disagree: bool) -> str:
    user = " ".join(request.user_texts)
    if PROBE in user:
        return json.dumps({"ok": True})
    name = re.search(r"name: (skill-[a-f])", user).group(1)
    base = SKILLS[name]
    model = request.body.get("model", "")
    scores = {}
    for i, crit in enumerate(CRITERIA):
        s = min(10, max(0, base + (i % 3) - 1))
        if model.endswith("judge-b"):
            s = 10 - s if disagree else min(10, s + (i % 2))
        scores[crit] = {"score": s, "reason": f"{crit} rated {s}"}
    return json.dumps(scores)


@pytest.mark.parametrize("disagree", [False, True])
def test_two_judges_report_agreement(tmp_path, capsys, disagree):
    root = _corpus(tmp_path / "skills")
    with ModelServer(lambda r: say(_rubric_reply(r, disagree=disagree))) as server:
        code = main([str(root), "--no-lint", "--quiet", "--judge-model", "openai/judge-a", "--judge-model",
                     "openai/judge-b", "--judge-base-url", server.base_url, "--out", str(tmp_path / "out"),
                     "--format", "json,md", "--no-figures"])
        probes = [r for r in server.requests if PROBE in " ".join(r.user_texts)]
        assert len(probes) == 2 and len(server.requests) == 2 + 2 * len(SKILLS)
    text = capsys.readouterr().out
    assert code == 0, text
    assert "Tier 2 rubric [litellm:openai/judge-a]: 6 rated, 0 unrated (errors)" in text
    agreement = json.loads((tmp_path / "out" / "corpus.json").read_text())["rubric_summary"]["judge_agreement"]
    assert agreement["n_items"] == 6 * len(CRITERIA) and agreement["judges"] == ["litellm:openai/judge-a", "litellm:openai/judge-b"]
    summary_md = (tmp_path / "out" / "summary.md").read_text()
    assert "Judge agreement: ICC(A,1)" in summary_md
    if disagree:
        assert agreement["icc"] < 0 and agreement["low"]
        assert "warning: judges agree poorly (ICC" in text and "**Warning:** judges agree poorly" in summary_md
    else:
        assert agreement["icc"] > 0.75 and not agreement["low"] and agreement["band"] in ("good", "excellent")
        assert "warning:" not in text
    print(f"\nICC(A,1) {'disagreeing' if disagree else 'agreeing'} judges: {agreement['icc']}; kappa {agreement['weighted_kappa_quadratic']}")


def test_icc_and_kappa_against_textbook_values():
    """Shrout & Fleiss (1979) table 2 data: ICC(2,1) = 0.29; identical raters give 1."""
    from aces_bench.static.stats import icc_a1, weighted_kappa

    sf = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    assert icc_a1(sf) == pytest.approx(0.29, abs=0.005)
    assert icc_a1([[1, 1], [5, 5], [9, 9]]) == 1.0
    assert weighted_kappa([0, 5, 10, 3], [0, 5, 10, 3]) == 1.0
    assert weighted_kappa([0, 10, 0, 10], [10, 0, 10, 0]) < 0
