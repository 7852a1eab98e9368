"""Routing: BM25L ranking plus the shared-terms threshold, over corpora of 1, 5 and 50."""

from __future__ import annotations

import random

import pytest
from rank_bm25 import BM25L, BM25Okapi

from aces_bench.agents.routing import SkillCard, content_terms, route

FIVE = [
    SkillCard(key="invoice-reconciler", name="invoice-reconciler",
              description="Reconcile an invoice ledger against a bank statement CSV to find unpaid invoices and short payments."),
    SkillCard(key="access-log-latency", name="access-log-latency",
              description="Compute p50, p95 and p99 response-time latency per API endpoint from nginx access logs."),
    SkillCard(key="semver-bump", name="semver-bump",
              description="Work out the next semantic version number from conventional commit messages since the last release tag."),
    SkillCard(key="log-triage", name="log-triage",
              description="Triage application error logs: group stack traces, count exceptions and find the first failure."),
    SkillCard(key="config-validator", name="config-validator",
              description="Validate YAML and JSON configuration files against a schema and report missing or mistyped keys."),
]

NEGATIVE_PROMPTS = [
    "How many names are written in data/party-guests.txt? There is one guest per line.",
    "How many lines does data/haiku-collection.txt contain, counting blank ones?",
    "Write a short poem about autumn leaves.",
    "Use the skill to write the answer file.",  # only task boilerplate words
]

# 50 synthetic skills on distinct topics; each topic has its own vocabulary.
TOPICS = [
    ("pdf-merger", "Merge several PDF documents into one and reorder their pages."),
    ("image-resizer", "Resize and crop PNG or JPEG images to thumbnails."),
    ("timezone-converter", "Convert meeting times between timezones and daylight saving rules."),
    ("sql-explainer", "Explain slow SQL queries from a PostgreSQL query plan and suggest indexes."),
    ("dns-checker", "Check DNS records, MX entries and TTL values for a domain."),
    ("cron-parser", "Parse crontab schedules and list the next execution times."),
    ("unit-converter", "Convert imperial and metric units of length, mass and temperature."),
    ("regex-tester", "Test regular expression patterns against sample strings and show capture groups."),
    ("git-blame-summary", "Summarise git blame authorship per source file and contributor."),
    ("docker-size-audit", "Audit docker image layers to find what makes a container image large."),
]
for i in range(40):
    TOPICS.append((f"synthetic-{i:02d}", f"Handle topic{i} widgets with gadget{i} sprockets and gizmo{i} reports."))
FIFTY = [SkillCard(key=k, name=k, description=d) for k, d in TOPICS[:45]] + FIVE


def test_stemming_and_stopwords():
    assert content_terms("Reconciles the invoices, using the reconciler skill on data/a.csv") == [
        "reconcil", "invoic", "reconcil", "csv"
    ]
    assert content_terms("Use the skill to write the answer file.") == []


def test_bm25okapi_is_degenerate_for_one_document_but_bm25l_is_not():
    # Why routing uses BM25L: Okapi's IDF is non-positive when every document has the term.
    doc = [content_terms(FIVE[0].description)]
    query = content_terms("reconcile the invoice ledger")
    assert max(BM25Okapi(doc).get_scores(query)) <= 0
    assert min(BM25L(doc).get_scores(query)) > 0


@pytest.mark.parametrize("card", FIVE, ids=lambda c: c.key)
def test_corpus_of_one_routes_on_topic_and_not_off_topic(card):
    on_topic = f"Please help: {card.description}"
    assert route(on_topic, [card]).chosen == card.key
    for prompt in NEGATIVE_PROMPTS:
        decision = route(prompt, [card])
        assert decision.chosen is None, (prompt, decision)
        assert "no skill shares 2+ content terms" in decision.reason


def test_corpus_of_five_explicit_implicit_and_negative():
    explicit = route("Use the invoice-reconciler skill on data/march.csv and data/bank.csv.", FIVE)
    assert explicit.chosen == "invoice-reconciler"
    assert explicit.reason == "prompt names skill 'invoice-reconciler'"

    implicit = route(
        "Users say the gateway hangs. From data/gateway.log, which route has the worst p99 response time?", FIVE
    )
    assert implicit.chosen == "access-log-latency"
    assert "p99" in implicit.candidates[0].shared_terms

    release = route("What version number should the next release get given these commit messages?", FIVE)
    assert release.chosen == "semver-bump"

    for prompt in NEGATIVE_PROMPTS:
        assert route(prompt, FIVE).chosen is None, prompt


def test_corpus_of_fifty_picks_the_right_skill_and_rejects_negatives():
    assert len(FIFTY) == 50
    for card in FIFTY:
        assert route(card.description, FIFTY).chosen == card.key, card.key
    assert route("Our ledger does not tie out with the bank statement: which invoices are unpaid?", FIFTY).chosen == (
        "invoice-reconciler"
    )
    assert route("Resize these PNG images into thumbnails for the gallery.", FIFTY).chosen == "image-resizer"
    for prompt in NEGATIVE_PROMPTS:
        assert route(prompt, FIFTY).chosen is None, prompt


def test_one_shared_term_is_not_enough_but_naming_the_skill_is():
    card = FIVE[0]
    assert route("Count the rows of data/people.csv.", [card]).chosen is None  # shares only "csv"
    assert route("Count the rows of data/people.csv.", [card], min_shared=1).chosen == card.key
    named = route("Run invoice reconciler now.", [card])
    assert named.chosen == card.key and named.candidates[0].named


def test_ties_break_by_name_whatever_the_order():
    twins = [
        SkillCard(key="zeta-ledger", name="zeta-ledger", description="Reconcile invoice ledgers with bank statements."),
        SkillCard(key="alpha-ledger", name="alpha-ledger", description="Reconcile invoice ledgers with bank statements."),
        SkillCard(key="mid-ledger", name="mid-ledger", description="Reconcile invoice ledgers with bank statements."),
    ]
    prompt = "Reconcile the invoices against the bank statement."
    decisions = set()
    rng = random.Random(7)
    for _ in range(6):
        rng.shuffle(twins)
        d = route(prompt, twins)
        decisions.add((d.chosen, tuple(c.key for c in d.candidates)))
    assert decisions == {("alpha-ledger", ("alpha-ledger", "mid-ledger", "zeta-ledger"))}


def test_decision_evidence_lists_every_candidate():
    d = route("Reconcile the invoices against the bank statement.", FIVE)
    assert d.chosen == "invoice-reconciler"
    assert {c.key for c in d.candidates} == {c.key for c in FIVE}
    assert d.candidates[0].eligible and not d.candidates[-1].eligible
    assert d.query_terms == ("bank", "invoic", "reconcil", "statement")


def test_empty_inputs():
    assert route("anything about invoices", []).reason == "no skills staged"
    assert route("", FIVE).chosen is None
    blank = SkillCard(key="blank", name="blank", description="the and of")
    assert route("reconcile invoices", [blank]).chosen is None
