"""``aces-bench dataset create``: merge author cases, EVAL.md intent and generated cases.

Order in the written suite: the author's cases as they were, then EVAL.md's questions,
then generated cases (templates, or an LLM through the judge layer) for the buckets
no author or EVAL.md case covers. A case without ``source: template``/``llm`` is the
author's and is never replaced; EVAL.md and ``eval.config`` are never written.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from aces_bench.cases.evalmd import EVAL_MD, EvalIntent, find_eval_md, intent_cases, read_intent
from aces_bench.cases.formats import (
    DEFAULT_EVALS_FILE,
    Assets,
    carry_proposals,
    read_assets,
    render_suite,
)
from aces_bench.cases.model import EvalCase, EvalSuite
from aces_bench.core.errors import AcesError
from aces_bench.core.io import write_text
from aces_bench.datasets.decidable import plan_draft
from aces_bench.datasets.grounding import ground
from aces_bench.datasets.templates import BUCKETS, template_cases
from aces_bench.inputs.skills import Skill, discover_skill_dirs, load_skill
from aces_bench.judges.base import Judge


@dataclass
class CreateReport:
    """What ``dataset create`` did, for the user and for tests."""

    path: Path
    written: bool = False
    changed: bool = False
    kept: list[str] = field(default_factory=list)
    intent: list[str] = field(default_factory=list)
    generated: list[str] = field(default_factory=list)
    fixtures: dict[str, str] = field(default_factory=dict)  # generated fixture: path in the skill -> text
    removed: list[str] = field(default_factory=list)
    covered: dict[str, list[str]] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    suite: EvalSuite | None = None

    def render(self) -> str:
        state = "wrote" if self.written else ("would write" if self.changed else "unchanged")
        lines = [f"{state}: {self.path}"]
        if self.kept:
            lines.append(f"kept {len(self.kept)} author-written case(s), never overwritten: {', '.join(self.kept)}")
        if self.intent:
            lines.append(f"EVAL.md questions, ahead of generated cases: {', '.join(self.intent)}")
        if self.generated:
            lines.append(f"generated: {', '.join(self.generated)}")
        if self.removed:
            lines.append(f"removed earlier generated case(s) no longer produced: {', '.join(self.removed)}")
        for bucket, ids in self.covered.items():
            lines.append(f"bucket {bucket}: covered by {', '.join(ids)} (not generated)")
        drafts = [c for c in (self.suite.evals if self.suite else []) if c.id in self.generated]
        if drafts:
            judged = [c.id for c in drafts if c.judged_only]
            lines.append(f"decidable without a judge: {len(drafts) - len(judged)} of {len(drafts)} drafted case(s)"
                         + (f"; judged only: {', '.join(judged)}" if judged else ""))
            lines.append("every drafted case is unreviewed (status: draft): read it, then delete that line "
                         "or accept it with 'aces-bench dataset refine --confirm CASE_ID'")
        lines += self.messages
        return "\n".join(lines)


def _covered(cases: list[EvalCase]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c in cases:
        bucket = "negative" if c.is_negative_control else c.kind
        if bucket:
            out.setdefault(bucket, []).append(c.id)
    return out


def merge_cases(
    assets: Assets, intent_new: list[EvalCase], generated: list[EvalCase], report: CreateReport
) -> list[EvalCase]:
    """The written case list (pure apart from ``report``): author, then EVAL.md, then generated."""
    existing = assets.evals_cases
    old_by_id = {c.id: c for c in existing}
    authors = [c for c in existing if c.source == "author"]
    author_ids = {c.id for c in authors} | {c.id for c in assets.config_cases}
    report.kept = [c.id for c in authors]
    if assets.config_cases:
        report.messages.append(
            f"eval.config cases (the author's file, read but not rewritten): {', '.join(c.id for c in assets.config_cases)}"
        )
    out = list(authors)
    for case in intent_new + generated:
        if case.id in author_ids:
            report.messages.append(
                f"skipped {case.source} case {case.id!r}: an author-written case has that id (kept the author's)"
            )
            continue
        if case.id in {c.id for c in out}:
            report.messages.append(f"skipped {case.source} case {case.id!r}: the id is already used above")
            continue
        out.append(carry_proposals(case, old_by_id.get(case.id)))
        (report.intent if case.source == "eval_md" else report.generated).append(case.id)
    kept_ids = {c.id for c in out}
    report.removed = [c.id for c in existing if c.source != "author" and c.id not in kept_ids]
    return out


def plan_buckets(assets: Assets, intent_new: list[EvalCase], all_buckets: bool, report: CreateReport) -> list[str]:
    """Buckets to generate: those no author or EVAL.md case covers (all with ``all_buckets``)."""
    authored = [c for c in assets.evals_cases if c.source == "author"] + assets.config_cases + intent_new
    covered = _covered(authored)
    if all_buckets:
        return list(BUCKETS)
    report.covered = {b: covered[b] for b in BUCKETS if b in covered}
    return [b for b in BUCKETS if b not in covered]


def create_dataset(
    skill_dir: Path, *, judge: Judge | None = None, all_buckets: bool = False, dry_run: bool = False
) -> CreateReport:
    """Write the skill's evals file with author, EVAL.md and generated cases; report what happened."""
    skill_dir = Path(skill_dir)
    skill = load_skill(skill_dir)
    assets = read_assets(skill_dir, skill.name)
    intent = read_intent(skill_dir)
    path = assets.evals_path or skill_dir / DEFAULT_EVALS_FILE
    report = CreateReport(path=path)
    intent_new = intent_cases(intent, skill.name, find_eval_md(skill_dir) or skill_dir / EVAL_MD)
    buckets = plan_buckets(assets, intent_new, all_buckets, report)
    generated = _generate(skill, intent, buckets, judge, report)
    cases = merge_cases(assets, intent_new, generated, report)
    suite = EvalSuite(skill_name=skill.name, evals=cases, notes=list(intent.notes)) if cases else None
    report.suite = suite
    if suite is None:
        report.messages.append("no cases to write")
        return report
    text = render_suite(suite, path.suffix)
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    report.changed = text != current
    named = {f.src for c in cases for f in c.files}
    fixtures = {rel: body for rel, body in report.fixtures.items() if rel in named}
    stale = {rel for rel, body in fixtures.items()
             if not (skill_dir / rel).is_file() or (skill_dir / rel).read_text(encoding="utf-8") != body}
    report.changed = report.changed or bool(stale)
    if report.changed and not dry_run:
        for rel in sorted(stale):
            write_text(skill_dir / rel, fixtures[rel])
            report.messages.append(f"wrote generated fixture {rel} (its answer is known: the draft wrote it)")
        write_text(path, text)
        report.written = True
    if dry_run:
        report.messages.append("dry run: nothing written")
    return report


def neighbours(skill: Skill) -> list[Skill]:
    """Other skills near this one, for negative controls: its siblings, then the bundled decoy pool."""
    import aces_bench.examples

    pool = Path(aces_bench.examples.__file__).parent / "decoy-pool"
    out: list[Skill] = []
    for parent in (skill.path.resolve().parent, pool):
        for d in discover_skill_dirs(parent) if parent.is_dir() else []:
            if d.resolve() == skill.path.resolve():
                continue
            try:
                out.append(load_skill(d))
            except AcesError:
                continue  # a broken sibling is that skill's problem, not this draft's
    return out


def _generate(skill: Skill, intent: EvalIntent, buckets: list[str], judge: Judge | None, report: CreateReport) -> list[EvalCase]:
    if not buckets:
        return []
    g = ground(skill)
    if g.derived is not None:
        report.messages.append(f"ran `{g.derived.command}` in the sandbox on the skill's own fixtures "
                               "(its output is never an expected value)")
    elif g.unrun:
        report.messages.append(f"ran nothing: {g.unrun}")
    plan = plan_draft(skill, g)
    if plan.fixture is not None:
        report.fixtures[plan.fixture_src] = plan.fixture.text
    if plan.why_judged:
        report.messages.append(f"drafts can only be judged: {plan.why_judged}")
    others = neighbours(skill)
    if judge is None:
        return template_cases(skill, buckets, intent.directives, others=others, grounding=g, plan=plan)
    from aces_bench.datasets.llm import generate_with_judge

    cases, missing = asyncio.run(generate_with_judge(skill, intent, judge, buckets, grounding=g, plan=plan))
    if missing:
        report.messages.append(
            f"the judge wrote no case for bucket(s) {', '.join(missing)}: filled them with offline templates"
        )
        cases += template_cases(skill, missing, intent.directives, others=others, grounding=g, plan=plan)
    order = {b: i for i, b in enumerate(BUCKETS)}
    return sorted(cases, key=lambda c: order[c.kind or "explicit"])
