"""Static vs live in the study report: scan of the target skills, Spearman with a Fisher-z CI, skips."""

from __future__ import annotations

import json
import math
import re
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from scipy.stats import spearmanr
from support.reports import MEMBERS, SKILLS, SKILLS_DIR, MemberPlan, make_study

from aces_bench.analysis import build_report
from aces_bench.analysis.static_live import scan_targets
from aces_bench.records.summary import ReportSummary
from aces_bench.reports.records import load_study
from aces_bench.static import ScanOptions, run_scan
from aces_bench.static.rubric import COHERENCE, CRITERIA


def _summary(report_dir) -> ReportSummary:
    return ReportSummary.model_validate_json((report_dir / "summary.json").read_text())


def _skill_lift(s: ReportSummary) -> dict[str, float]:
    return {r.group["skill"]: r.lift for r in s.by_skill if r.outcome == s.headline_outcome}


def test_target_skills_are_scanned_and_correlated_with_their_lift(report_dir, study_dir):
    s = _summary(report_dir)
    sl = s.static_vs_live
    assert sl.status == "ran" and sl.outcome == "outcome"
    _, direct = run_scan([study_dir / SKILLS_DIR / k for k in SKILLS], ScanOptions(lint=False))
    expected = {r.skill: r.score for r in direct}
    assert {k.skill: k.structural for k in sl.skills} == expected
    assert len(set(expected.values())) == 3  # the fixture's SKILL.md files differ in quality
    lift = _skill_lift(s)
    names = sorted(expected)
    rho = spearmanr([expected[n] for n in names], [lift[n] for n in names]).statistic
    assert sl.tier1.n == 3 and sl.tier1.rho == pytest.approx(rho)
    assert sl.tier1.ci_lo is None and sl.tier1.ci_hi is None  # Fisher-z needs n >= 4
    assert "the Fisher-z interval needs 4 or more" in sl.caveat
    assert sl.tier2 is None and sl.tier2_status.startswith("not run: the study's judge is the offline heuristic judge")
    assert s.stats.static_correlation == sl.tier1


def test_index_shows_the_section_the_caveat_and_the_scatter(report_dir):
    index = (report_dir / "index.html").read_text()
    assert '<h3 id="static-vs-live">Static vs live</h3>' in index
    # the sentence about the finding is computed from this study's correlation, not fixed text
    assert "too few for an interval: this alone neither shows nor rules out that the scan predicts lift" in index
    assert "Fisher-z interval needs 4+ pairs" in index
    assert "<strong>Caveat</strong>: only 3 skills with both a structural score and a lift" in index
    assert '<figure id="fig-static_vs_live">' in index
    assert (report_dir / "figures" / "static_vs_live.svg").stat().st_size > 1000


def test_four_or_more_skills_give_a_fisher_z_interval(tmp_path):
    skills = (*SKILLS, "extra-one", "extra-two")
    root = make_study(tmp_path / "s", members=(MEMBERS[0],), skills=skills)
    sl = _summary(build_report(root).parent).static_vs_live
    c = sl.tier1
    assert c.n == 5 and c.rho is not None
    half = 1.959963984540054 / math.sqrt(c.n - 3)
    assert c.ci_lo == pytest.approx(math.tanh(math.atanh(c.rho) - half))
    assert c.ci_hi == pytest.approx(math.tanh(math.atanh(c.rho) + half))
    assert sl.caveat == "n = 5 skills: the interval is wide; read it as uninformative unless it excludes 0"


def test_gone_or_changed_skill_folders_are_skipped_with_the_reason(tmp_path):
    root = make_study(tmp_path / "s", members=(MEMBERS[0],))
    folder = root / SKILLS_DIR / SKILLS[1]
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + "\nEdited after the study.\n")
    scores = scan_targets(load_study(root))
    by_name = {k.skill: k for k in scores.skills}
    assert by_name[SKILLS[1]].status == "skipped"
    assert by_name[SKILLS[1]].reason == "the folder changed since the study (content hash differs from provenance.json)"
    assert sorted(scores.structural) == sorted({SKILLS[0], SKILLS[2]})

    shutil.rmtree(root / SKILLS_DIR)
    index = build_report(root)
    sl = _summary(index.parent).static_vs_live
    assert sl.status == "skipped" and sl.tier1 is None
    assert sl.reason.startswith("no target skill could be scanned")
    assert {k.status for k in sl.skills} == {"skipped"}
    assert all(k.reason.startswith("skill folder is gone") for k in sl.skills)
    html = index.read_text()
    assert "Not computed because no target skill could be scanned" in html
    note = html[html.index('id="figures-not-drawn"'):]
    assert "Structural score vs task outcome lift (no target skill could be scanned" in note[:note.index("</p>")]
    assert not (index.parent / "figures" / "static_vs_live.svg").exists()


class _RubricServer:
    """A local OpenAI-compatible endpoint that rates each skill's rubric from a fixed table."""

    def __init__(self, scores: dict[str, int]):
        self.scores, self.bodies = scores, []
        state = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                user = body["messages"][-1]["content"]
                if user == 'Reply with {"ok": true}.':  # the scan's one probe request per judge
                    reply = {"ok": True}
                else:
                    state.bodies.append(body)
                    name = re.search(r"^name: (\S+)", user, re.MULTILINE).group(1)
                    keys = [*CRITERIA, COHERENCE] if f"- {COHERENCE}:" in user else list(CRITERIA)
                    reply = {k: {"score": state.scores[name], "reason": f"{name}: rated {state.scores[name]}"}
                             for k in keys}
                payload = json.dumps({"id": "t", "object": "chat.completion", "created": 0, "model": "rubric-judge",
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant", "content": json.dumps(reply)}}],
                                      "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


def test_an_llm_judged_study_also_correlates_the_tier2_rubric(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    server = _RubricServer({SKILLS[0]: 3, SKILLS[1]: 8, SKILLS[2]: 6})
    try:
        plan = MemberPlan("reference-llm-judge", ("harness=reference", "workspace=isolation", "judge=litellm",
                                                  "judge.model=openai/rubric-judge", f"judge.base_url={server.url}",
                                                  "judge.cache_dir=null"), 1, 0.4, 0.3)
        root = make_study(tmp_path / "s", members=(plan,))
        s = _summary(build_report(root).parent)
    finally:
        server.httpd.shutdown()
    sl = s.static_vs_live
    assert sl.tier2_status == "ran (judge openai/rubric-judge)"
    assert {k.skill: k.rubric for k in sl.skills} == {SKILLS[0]: 30.0, SKILLS[1]: 80.0, SKILLS[2]: 60.0}
    assert len(server.bodies) == 3 and {b["temperature"] for b in server.bodies} == {0.0}
    lift = _skill_lift(s)
    rho = spearmanr([30.0, 80.0, 60.0], [lift[k] for k in SKILLS]).statistic
    assert sl.tier2.n == 3 and sl.tier2.rho == pytest.approx(rho) and sl.tier2.ci_lo is None
