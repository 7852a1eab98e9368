"""The static HTML: untrusted text escaped, offline, and every section the brief names."""

from __future__ import annotations

import re

from support.reports import PLANTED_SCRIPT

from aces_bench.records.summary import ReportSummary
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
    for text in ("outcome lift", "bootstrap of whole cases", "reference agent (deterministic, non-LLM)",
                 "local bubblewrap sandbox", "heuristic (offline, deterministic)", "Routing premium",
                 "git commit", "overrides", "resolved config", "Missingness", "imputation sensitivity",
                 "one-sided case keys", "missing trajectories", "Evidence inventory", "Per-harness coverage",
                 "Discoverability", "summary.json", '<h3 id="by-decoy-set">By decoy set</h3>', "two-sided imputation bounds",
                 "Negative controls", "Statistics appendix"):
        assert text in index, text
    assert re.search(r'<span class="tag (bad|ok)">(dirty|clean)', index)


def test_first_screen_is_the_verdict_and_every_link_resolves(report_dir):
    index = (report_dir / "index.html").read_text()
    s = ReportSummary.model_validate_json((report_dir / "summary.json").read_text())
    # the verdict comes before the figures and every detail section
    assert index.index('id="verdict-table"') < index.index('id="figures"') < index.index('<details class="section"')
    for r in s.by_skill:
        if r.outcome == s.headline_outcome:
            assert f'data-skill="{r.group["skill"]}"' in index
    # one note instead of banners; no fixed claims about what the data show
    assert 'class="skipped"' not in index and "such correlations are near zero" not in index
    assert index.count('id="figures-not-drawn"') <= 1
    assert "n_unscored_status_ok</th>" not in index and "unscored though the trial ran" in index
    for page in [report_dir / "index.html", report_dir / "appendix.html", report_dir / "triage.html",
                 *(report_dir / "skills").glob("*.html")]:
        for href in re.findall(r'href="([^"#]+)', page.read_text()):
            assert (page.parent / href).is_file(), (page.name, href)


def test_appendix_states_the_studys_own_numbers(report_dir):
    s = ReportSummary.model_validate_json((report_dir / "summary.json").read_text())
    html = (report_dir / "appendix.html").read_text()
    tex = (report_dir / "tables" / "appendix.tex").read_text()
    head = next(r for r in s.pooled if r.outcome == s.headline_outcome)
    for text in (f"{head.n} scored pairs in {head.n_cases} cases", "Benjamini-Hochberg", "design effect",
                 "worst case for the skill"):
        assert text in html and text.replace("_", "\\_") in tex, text


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
