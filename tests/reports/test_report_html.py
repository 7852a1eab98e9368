"""The static HTML: untrusted text escaped, offline, and every section the brief names."""

from __future__ import annotations

import re

from report_fixtures import PLANTED_SCRIPT

from aces_bench.reports.html import skill_slug


def _pages(report_dir):
    return {p.relative_to(report_dir).as_posix(): p.read_text() for p in sorted(report_dir.rglob("*.html"))}


def test_planted_script_is_shown_as_text_never_as_markup(report_dir):
    pages = _pages(report_dir)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages["skills/invoice-reconciler.html"]
    for name, html in pages.items():
        assert PLANTED_SCRIPT not in html, name
        assert "<script" not in html.lower(), name


def test_pages_are_self_contained_and_forbid_requests(report_dir):
    for name, html in _pages(report_dir).items():
        assert "Content-Security-Policy" in html and "default-src 'none'" in html, name
        for attr in re.findall(r'(?:src|href)="([^"]*)"', html):
            assert not re.match(r"^(https?:)?//", attr), (name, attr)
        assert "<link" not in html, name
    index = _pages(report_dir)["index.html"]
    assert index.count('src="data:image/svg+xml;base64,') == 7


def test_index_shows_headline_provenance_and_missingness(report_dir):
    index = (report_dir / "index.html").read_text()
    for text in ("outcome lift", "cluster bootstrap 95% CI", "reference agent (deterministic, non-LLM)",
                 "local bubblewrap sandbox", "heuristic (offline, deterministic)", "Routing premium",
                 "git commit", "overrides", "resolved config", "Missingness", "imputation sensitivity",
                 "one-sided case keys", "missing trajectories", "Evidence inventory", "Per-harness coverage",
                 "Discoverability", "summary.json", '<h2 id="by-decoy-set">By decoy set</h2>'):
        assert text in index, text
    assert re.search(r'<span class="tag (bad|ok)">(dirty|clean)', index)


def test_skill_page_shows_pairs_side_by_side_with_evidence(report_dir):
    page = (report_dir / "skills" / "semver-bump.html").read_text()
    # Every pair key of the skill: 4 cases x 6 attempts over the five sweep members.
    assert page.count('<section class="pair"') == 24
    assert page.count('<div class="side with">') == page.count('<div class="side baseline">') == 24
    assert "judge reason: the answer" in page and "heuristic (offline, deterministic)" in page
    assert "show more (" in page  # the long observation is folded
    assert "<details><summary>instruction</summary>" in page
    assert "trajectory: " in page and "tool call" in page
    access = (report_dir / "skills" / "access-log-latency.html").read_text()
    # The planted trial: the script fails, the agent patches it, then passes (graded by the real graders).
    assert ('self-correction: <span class="tag bad">the agent changed the skill</span>first-attempt skill_execution 0.83'
            " · first attempt ends at step 5, the first change to the target skill; checks that only passed after it:"
            " execution") in access
    assert '<span class="tag ok">final pass: yes</span> <span class="tag bad">first-attempt pass: no</span>' in access
    assert ("<strong>Checks affected</strong> (passed in the end, not on the first attempt): "
            '<span class="tag bad">execution</span>') in access
    assert "<code>/skills/access-log-latency/scripts/run.py</code> by bash at step 5" in access
    assert "<code>/skills/access-log-latency/scripts/run.py</code> via bash failed at step 4 (exit 1)" in access
    assert "of the action that failed at step 4: <span class=\"tag ok\">succeeded</span>" in access
    invoice = (report_dir / "skills" / "invoice-reconciler.html").read_text()
    assert "target SKILL.md never read" in invoice
    assert "EnvironmentStartTimeoutError: sandbox did not start" in invoice
    assert "unscored: trial did not run to completion (infra_error)" in invoice


def test_skill_slug_is_safe_and_distinct():
    assert skill_slug("semver-bump") == "semver-bump"
    odd = skill_slug("../a b")
    assert "/" not in odd and odd.startswith("a-b-")
    assert skill_slug("a b") != skill_slug("a/b")
