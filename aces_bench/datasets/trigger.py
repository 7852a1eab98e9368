"""Trigger evaluation: does the skill activate for the queries it should, and only those?

For a set of ``{query, should_trigger}`` queries (skill-creator's trigger set, a
SkillEvaluator ``should_trigger`` case, EVAL.md's trigger sections), a router decides,
``runs`` times per query, which skill (if any) it would activate, in isolation (only
the target staged) and in a group workspace (the target plus decoys). Nothing runs
past the activation decision. Reported: the trigger rate per query, precision and
recall with Wilson intervals, and a confusion matrix of which skill fired for which
query across the group.

Routers: ``reference`` is the reference agent's own deterministic router
(``aces_bench/agents/routing.py``, the same decision it makes inside a trial), so its
N runs agree and are labelled so; with a configured model (``--judge-model``) the
model is shown the staged skills' names and descriptions and the query and names the
skill it would activate, once per run.

Description optimisation (``--optimise``) splits the queries into a stratified
train/test split (seeded), proposes descriptions (the configured model, or offline a
deterministic proposer that adds the missed train queries' content words, labelled as
such), scores every candidate on the train queries and chooses the best on the
held-out test queries.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from aces_bench.agents.routing import SkillCard, content_terms, route
from aces_bench.cases.evalmd import read_intent
from aces_bench.cases.safety import read_asset_text
from aces_bench.core.errors import EvalsError, validation_lines
from aces_bench.inputs.skills import Skill, discover_skill_dirs, load_skill
from aces_bench.judges.base import Judge
from aces_bench.stats.inference import wilson_interval

TRIGGER_FILES = ("evals/trigger-evals.json", "evals/trigger_evals.json", "evals/triggers.json",
                 "evals/trigger-eval.json", "evals/trigger_eval.json")
NONE = "(none)"
FAILED = "(failed)"
"""Confusion-matrix column of trials that failed or timed out before any activation (counted, not scored)."""
PROMPT_ID = "trigger.route"
PROMPT_VERSION = "1"
ROUTE_SYSTEM = """You are an agent deciding whether to activate one of the skills available to you before
answering a user's request. Each skill has a name and a description. Activate a skill only when
its description says it is meant for the request. Reply with JSON: {"skill": "<name>"} to activate
one, or {"skill": null} to answer without a skill."""
PROPOSE_SYSTEM = """You improve the description of an agent skill so that an agent activates it for the requests
it is meant for and not for others. You are given the current description and requests it
currently gets wrong. Reply with JSON {"descriptions": ["...", ...]}: a few alternative
descriptions, each one or two sentences, no longer than 1024 characters."""


class TriggerQuery(BaseModel):
    """One query of a trigger set (skill-creator's shape; some of its forks spell ``query`` ``prompt``).

    ``expected_skill`` names the skill the query is meant for (the target, a decoy, or
    null for none); without it, ``should_trigger`` says target or none. A query meant
    for a decoy is a should-not-trigger query for the target, and a routing question
    whose right answer is the decoy (the confusion matrix's row).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    query: str = Field(min_length=1)
    should_trigger: bool | None = None
    expected_skill: str | None = Field(default=None, description="the skill meant to fire; null: none (when given)")

    @model_validator(mode="before")
    @classmethod
    def _prompt_spelling(cls, data: Any) -> Any:
        if isinstance(data, dict) and "prompt" in data:
            if "query" in data:
                raise ValueError("give either 'query' or 'prompt' (the same field), not both")
            data = {("query" if k == "prompt" else k): v for k, v in data.items()}
        return data

    @model_validator(mode="after")
    def _says_what_should_fire(self) -> TriggerQuery:
        if self.should_trigger is None and "expected_skill" not in self.model_fields_set:
            raise ValueError("give should_trigger (true/false) or expected_skill (a skill name, or null for none)")
        return self

    def resolved(self, target: str) -> TriggerQuery:
        """This query with both fields set for ``target``; a contradiction between them is a ValueError."""
        if "expected_skill" in self.model_fields_set:
            meant = self.expected_skill is not None and _same(self.expected_skill, target)
            if self.should_trigger is not None and self.should_trigger != meant:
                raise ValueError(f"should_trigger is {str(self.should_trigger).lower()} but expected_skill is "
                                 f"{self.expected_skill!r} (the target is {target!r})")
            return self.model_copy(update={"should_trigger": meant})
        return self.model_copy(update={"expected_skill": target if self.should_trigger else None})


def _same(a: str, b: str) -> bool:
    return a.strip().lower().replace("_", "-") == b.strip().lower().replace("_", "-")


class _Choice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skill: str | None


class _Proposals(BaseModel):
    model_config = ConfigDict(extra="forbid")

    descriptions: list[str] = Field(min_length=1)


def read_trigger_file(path: Path) -> list[TriggerQuery]:
    """A JSON list of ``{query, should_trigger}``; errors name the item and the fix."""
    if not Path(path).is_file():
        raise EvalsError("no such file", where=path, fix="give the path of a JSON list of {query, should_trigger}")
    try:
        raw = json.loads(read_asset_text(path))
    except json.JSONDecodeError as exc:
        raise EvalsError(f"not valid JSON: {exc.msg} at line {exc.lineno}", where=path, fix="fix the JSON syntax") from None
    if isinstance(raw, dict) and isinstance(raw.get("evals"), list):
        raw = raw["evals"]
    if not isinstance(raw, list) or not raw:
        raise EvalsError("a trigger set is a non-empty JSON list", where=path,
                         fix='write [{"query": "...", "should_trigger": true}, ...]')
    out = []
    for i, item in enumerate(raw):
        try:
            out.append(TriggerQuery.model_validate(item))
        except ValidationError as err:
            raise EvalsError("; ".join(validation_lines(err, prefix=f"[{i}]")), where=path,
                             fix='each item is {"query": "...", "should_trigger": true|false} or {"query": "...", '
                                 '"expected_skill": "<skill>"|null} ("prompt" is read as "query")') from None
    return out


def find_trigger_queries(skill_dir: Path) -> tuple[list[TriggerQuery], list[str]]:
    """The skill's trigger queries: its trigger file, EVAL.md's trigger sections, and where each came from."""
    skill_dir = Path(skill_dir)
    queries: list[TriggerQuery] = []
    sources: list[str] = []
    for rel in TRIGGER_FILES:
        if (skill_dir / rel).is_file():
            found = read_trigger_file(skill_dir / rel)
            queries += found
            sources.append(f"{rel} ({len(found)})")
    intent = read_intent(skill_dir)
    md = [TriggerQuery(query=q, should_trigger=True) for q in intent.trigger]
    md += [TriggerQuery(query=q, should_trigger=False) for q in intent.no_trigger]
    if md:
        queries += md
        sources.append(f"EVAL.md ({len(md)})")
    return queries, sources


def _card(skill: Skill, description: str | None = None) -> SkillCard:
    return SkillCard(key=skill.path.name, name=skill.name, description=skill.description if description is None else description)


class Router:
    """Decides which staged skill (card key) a query activates, or None."""

    label = "reference router (offline, deterministic: BM25L over names and descriptions)"
    deterministic = True

    async def choose(self, query: str, cards: list[SkillCard]) -> str | None:
        return route(query, cards).chosen


class ModelRouter(Router):
    """The configured model picks a skill from the staged cards (one call per run)."""

    deterministic = False

    def __init__(self, judge: Judge):
        if judge.kind != "llm":
            raise EvalsError(f"judge {judge.label!r} is not a model", where="--judge-model",
                             fix="name an LLM with --judge-model, or drop it for the offline reference router")
        self.judge = judge
        self.label = f"model router ({judge.label}, prompt {PROMPT_ID} v{PROMPT_VERSION})"
        self.failures = 0

    async def choose(self, query: str, cards: list[SkillCard]) -> str | None:
        listing = "\n".join(f"- {c.name}: {c.description}" for c in cards)
        outcome = await self.judge.ask(prompt_id=PROMPT_ID, prompt_version=PROMPT_VERSION, system=ROUTE_SYSTEM,
                                       user=f"Available skills:\n{listing}\n\nUser request:\n{query}", schema=_Choice)
        if outcome.value is None:
            self.failures += 1
            raise EvalsError(f"the model router failed: {outcome.error}", where="--judge-model",
                             fix="check the model settings, or drop --judge-model for the offline router")
        by_name = {c.name: c.key for c in cards}
        return by_name.get(outcome.value.skill or "", None)


def _interval(k: int, n: int) -> tuple[float, float] | None:
    lo, hi = wilson_interval(k, n)
    return None if lo is None else (lo, hi)


@dataclass
class QueryResult:
    """One query's runs: what fired in each decided run, and the runs that failed undecided.

    A run that failed or timed out before activating anything decided nothing: it is
    counted in ``failed`` (and ``runs``), never scored as "did not trigger".
    ``expected`` is the key of the skill the query is meant for (None: no skill).
    """

    query: str
    should_trigger: bool
    runs: int
    fired: Counter = field(default_factory=Counter)  # skill key (or NONE) -> decided runs
    failed: int = 0
    failures: list[str] = field(default_factory=list)
    expected: str | None = None

    @property
    def decided(self) -> int:
        return self.runs - self.failed

    def rate(self, key: str) -> float:
        return self.fired[key] / self.decided if self.decided else float("nan")

    def rate_ci(self, key: str) -> tuple[float, float] | None:
        return _interval(self.fired[key], self.decided)


@dataclass
class ModeResult:
    """One workspace mode: per-query results, precision/recall and the confusion matrix."""

    mode: str
    target: str
    skills: list[str]
    queries: list[QueryResult]

    def counts(self) -> dict[str, int]:
        tp = sum(q.fired[self.target] for q in self.queries if q.should_trigger)
        fn = sum(q.decided - q.fired[self.target] for q in self.queries if q.should_trigger)
        fp = sum(q.fired[self.target] for q in self.queries if not q.should_trigger)
        tn = sum(q.decided - q.fired[self.target] for q in self.queries if not q.should_trigger)
        return {"tp": tp, "fn": fn, "fp": fp, "tn": tn}

    def totals(self) -> dict[str, int]:
        """Runs asked, decided and failed (failed or timed out before any activation)."""
        runs = sum(q.runs for q in self.queries)
        failed = sum(q.failed for q in self.queries)
        return {"runs": runs, "decided": runs - failed, "failed": failed}

    def precision(self) -> tuple[float | None, tuple[float, float] | None]:
        c = self.counts()
        n = c["tp"] + c["fp"]
        return (c["tp"] / n if n else None), _interval(c["tp"], n)

    def recall(self) -> tuple[float | None, tuple[float, float] | None]:
        c = self.counts()
        n = c["tp"] + c["fn"]
        return (c["tp"] / n if n else None), _interval(c["tp"], n)

    def expected_row(self, q: QueryResult) -> str:
        """The confusion row of a query: the skill it is meant for when that skill is visible in this mode,
        else none (in isolation a query meant for a decoy is right not to fire anything)."""
        want = q.expected if q.expected is not None else (self.target if q.should_trigger else None)
        return want if want is not None and want in set(self.skills) | {self.target} else NONE

    def confusion(self) -> dict[str, Counter]:
        """Rows: the skill each query is meant for (the target, a visible decoy, or none); columns: what fired."""
        rows: dict[str, Counter] = {self.target: Counter()}
        for q in self.queries:
            rows.setdefault(self.expected_row(q), Counter())
        rows.setdefault(NONE, Counter())
        for q in self.queries:
            row = rows[self.expected_row(q)]
            row.update(q.fired)
            if q.failed:
                row[FAILED] += q.failed
        order = [self.target, *sorted(k for k in rows if k not in (self.target, NONE)), NONE]
        return {k: rows[k] for k in order}

    def confusion_columns(self) -> list[str]:
        """Every staged skill, "(none)", and whatever else fired (a harness's own skill, "(failed)")."""
        return sorted({k for row in self.confusion().values() for k in row} | set(self.skills) | {self.target, NONE})

    def routing(self) -> tuple[float | None, tuple[float, float] | None, int, int]:
        """(share of decided runs where the skill meant fired - or nothing, when none was meant -, its
        Wilson interval, right, decided): the confusion matrix's diagonal over its decided runs."""
        right = sum(counter.get(row, 0) for row, counter in self.confusion().items())
        decided = self.totals()["decided"]
        return (right / decided if decided else None), _interval(right, decided), right, decided

    def accuracy(self) -> float:
        c = self.counts()
        total = sum(c.values())
        return (c["tp"] + c["tn"]) / total if total else float("nan")


def expected_key(q: TriggerQuery, keys: dict[str, str]) -> str | None:
    """The key (``keys``: skill name or key -> key) of the skill ``q`` is meant for; None for none.

    A skill that is not staged keeps its own name: it shows as expecting none in that mode."""
    if q.expected_skill is None:
        return None
    norm = q.expected_skill.strip().lower().replace("_", "-")
    return keys.get(norm, q.expected_skill)


def card_keys(cards: list[SkillCard]) -> dict[str, str]:
    out = {}
    for c in cards:
        out[c.name.lower().replace("_", "-")] = c.key
        out[c.key.lower().replace("_", "-")] = c.key
    return out


async def _run_mode(mode: str, target: Skill, cards: list[SkillCard], queries: list[TriggerQuery],
                    router: Router, runs: int) -> ModeResult:
    results = []
    keys = card_keys(cards)
    for q in queries:
        fired: Counter = Counter()
        for _ in range(runs):
            fired[await router.choose(q.query, cards) or NONE] += 1
        results.append(QueryResult(query=q.query, should_trigger=bool(q.should_trigger), runs=runs, fired=fired,
                                   expected=expected_key(q, keys)))
    return ModeResult(mode=mode, target=target.path.name, skills=[c.key for c in cards], queries=results)


def stratified_split(queries: list[TriggerQuery], test_share: float, seed: int) -> tuple[list[TriggerQuery], list[TriggerQuery]]:
    """Train and test queries with the same share of should/should-not in each (seeded)."""
    rng = random.Random(seed)
    train, test = [], []
    for label in (True, False):
        group = [q for q in queries if q.should_trigger is label]
        rng.shuffle(group)
        k = max(1, round(len(group) * test_share)) if len(group) > 1 else 0
        test += group[:k]
        train += group[k:]
    return train, test


def offline_proposals(description: str, missed: list[str], n: int = 3) -> list[str]:
    """Deterministic proposals: the description plus the content words of queries it missed."""
    words: list[str] = []
    for q in missed:
        for w in q.lower().replace(",", " ").split():
            if content_terms(w) and w.isalpha() and w not in words and w not in description.lower():
                words.append(w)
    out = []
    for k in range(1, n + 1):
        chosen = words[: max(2, len(words) * k // n)]
        if chosen:
            out.append(f"{description.rstrip('.')}. Use when asked about: {', '.join(chosen)}.")
    return list(dict.fromkeys(out))


@dataclass
class Candidate:
    description: str
    origin: str
    train: float = float("nan")
    test: float = float("nan")


@dataclass
class TriggerReport:
    skill: str
    router: str
    runs: int
    sources: list[str]
    modes: list[ModeResult]
    candidates: list[Candidate] = field(default_factory=list)
    chosen: Candidate | None = None
    split: tuple[int, int] | None = None
    notes: list[str] = field(default_factory=list)
    method: str = "router"
    """"router" (a routing decision, nothing runs) or "harness" (the agent ran through Harbor)."""
    scored_by: str | None = None
    """What scored the optimisation's candidates, where it differs from ``router``."""

    def render(self) -> str:
        lines = [f"trigger evaluation of {self.skill}: {sum(len(m.queries) for m in self.modes[:1])} queries "
                 f"from {', '.join(self.sources)}; decided by: {self.router}; {self.runs} run(s) per query"]
        lines += [f"note: {n}" for n in self.notes]
        for m in self.modes:
            t = m.totals()
            lines.append(f"\n[{m.mode}] staged: {', '.join(m.skills)}; runs {t['runs']}, decided {t['decided']}, "
                         f"failed or timed out {t['failed']}")
            for q in m.queries:
                row = m.expected_row(q)
                want = "should trigger" if q.should_trigger else \
                    f"meant for {row}" if row != NONE else "should not trigger"
                others = ", ".join(f"{k} {v}/{q.decided}" for k, v in sorted(q.fired.items()) if k != m.target)
                failed = f"  failed {q.failed}/{q.runs}" if q.failed else ""
                rate = "  n/a" if not q.decided else f"{q.rate(m.target):.2f}"
                lines.append(f"  {rate}  {want:18}  {q.query[:70]}" + (f"  (fired: {others})" if others else "")
                             + failed)
            for name, (value, ci) in (("precision", m.precision()), ("recall", m.recall())):
                shown = "undefined (no runs to count)" if value is None else f"{value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"
                lines.append(f"  {name}: {shown}")
            c = m.counts()
            lines.append(f"  counts: tp {c['tp']}, fn {c['fn']}, fp {c['fp']}, tn {c['tn']}")
            acc, aci, right, decided = m.routing()
            lines.append("  routing (the skill meant fired, or none when none was meant): "
                         + ("undefined (no runs to count)" if acc is None else
                            f"{acc:.2f} [{aci[0]:.2f}, {aci[1]:.2f}] ({right}/{decided})"))
            cols = m.confusion_columns()
            lines.append("  confusion (rows: expected, columns: fired): " + " | ".join(cols))
            for row, counter in m.confusion().items():
                lines.append(f"    {row}: " + " | ".join(str(counter.get(col, 0)) for col in cols))
        if self.candidates:
            lines.append(f"\ndescription optimisation (train {self.split[0]}, test {self.split[1]} queries, "
                         f"stratified; scored by: {self.scored_by or self.router}):")
            for cand in self.candidates:
                mark = "*" if cand is self.chosen else " "
                lines.append(f" {mark} train {cand.train:.2f}  test {cand.test:.2f}  [{cand.origin}] {cand.description}")
            lines.append("  (* chosen on the held-out test queries)")
        return "\n".join(lines)

    def to_json(self) -> dict:
        modes = []
        for m in self.modes:
            p, pci = m.precision()
            r, rci = m.recall()
            acc, aci, _, _ = m.routing()
            modes.append({
                "mode": m.mode, "skills": m.skills, "counts": m.counts(), **m.totals(),
                "precision": p, "precision_ci": pci, "recall": r, "recall_ci": rci,
                "routing_accuracy": acc, "routing_accuracy_ci": aci,
                "queries": [{"query": q.query, "should_trigger": q.should_trigger,
                             "expected_skill": m.expected_row(q), "runs": q.runs,
                             "decided": q.decided, "failed": q.failed, "failures": q.failures,
                             "trigger_rate": q.rate(m.target) if q.decided else None,
                             "trigger_rate_ci": q.rate_ci(m.target), "fired": dict(q.fired)} for q in m.queries],
                "confusion": {k: dict(v) for k, v in m.confusion().items()},
            })
        out = {"skill": self.skill, "router": self.router, "method": self.method, "runs": self.runs,
               "sources": self.sources, "notes": self.notes, "modes": modes}
        if self.candidates:
            out["optimisation"] = {
                "split": self.split,
                "scored_by": self.scored_by or self.router,
                "candidates": [c.__dict__ for c in self.candidates],
                "chosen": self.chosen.description if self.chosen else None,
            }
        return out


Evaluate = Callable[[str, list[TriggerQuery]], Awaitable[ModeResult]]
"""Trigger runs of the target in isolation with a given description over some queries."""


def router_evaluator(target: Skill, router: Router, runs: int) -> Evaluate:
    async def evaluate(description: str, queries: list[TriggerQuery]) -> ModeResult:
        return await _run_mode("isolation", target, [_card(target, description)], queries, router, runs)

    return evaluate


async def optimise(target: Skill, queries: list[TriggerQuery], evaluate: Evaluate, *,
                   judge: Judge | None, seed: int, test_share: float) -> tuple[list[Candidate], Candidate, tuple[int, int]]:
    """Propose descriptions from the train queries the current one gets wrong; score each
    candidate with ``evaluate`` on train and test; choose on test (held out)."""
    train, test = stratified_split(queries, test_share, seed)
    if not train or not test:
        raise EvalsError("description optimisation needs at least two queries of each kind (should / should not)",
                         where=target.path, fix="add trigger queries")
    base = await evaluate(target.description, train)
    missed = [q.query for q in base.queries if q.should_trigger and q.decided and q.rate(base.target) < 0.5]
    wrong = missed + [q.query for q in base.queries
                      if not q.should_trigger and q.decided and q.rate(base.target) >= 0.5]
    candidates = [Candidate(target.description, "current")]
    if judge is not None:
        listing = "\n".join(f"- {w}" for w in wrong) or "(none: it gets every training request right)"
        outcome = await judge.ask(prompt_id="trigger.propose", prompt_version="1", system=PROPOSE_SYSTEM,
                                  user=f"Skill: {target.name}\nCurrent description: {target.description}\n\n"
                                       f"Requests it gets wrong:\n{listing}", schema=_Proposals)
        if outcome.value is None:
            raise EvalsError(f"the proposer failed: {outcome.error}", where="--judge-model",
                             fix="check the model settings, or drop --judge-model for the offline proposer")
        candidates += [Candidate(d, f"proposed by {outcome.judge}") for d in outcome.value.descriptions]
    else:
        candidates += [Candidate(d, "deterministic offline proposer") for d in offline_proposals(target.description, missed)]
    for cand in candidates:
        if cand.description == target.description:
            cand.train, cand.test = base.accuracy(), (await evaluate(cand.description, test)).accuracy()
            continue
        # One batch of trials per candidate (train then test), split back by position.
        both = await evaluate(cand.description, train + test)
        cand.train = _part(both, both.queries[:len(train)]).accuracy()
        cand.test = _part(both, both.queries[len(train):]).accuracy()
    # The choice is made on held-out queries; ties keep the earlier (the current description first).
    chosen = max(candidates, key=lambda c: (_finite(c.test), -candidates.index(c)))
    return candidates, chosen, (len(train), len(test))


def _part(result: ModeResult, queries: list[QueryResult]) -> ModeResult:
    return ModeResult(mode=result.mode, target=result.target, skills=result.skills, queries=queries)


def _finite(x: float) -> float:
    return -1.0 if x != x else x  # NaN (nothing decided) ranks below every score


def load_queries(target: Skill, queries_file: Path | None) -> tuple[list[TriggerQuery], list[str]]:
    """The queries of ``queries_file``, else the skill's own, each resolved for the target (should_trigger and
    expected_skill both set); an error when there are none or one contradicts itself."""
    if queries_file is not None:
        queries, sources = read_trigger_file(queries_file), [str(queries_file)]
    else:
        queries, sources = find_trigger_queries(target.path)
    if not queries:
        raise EvalsError("no trigger queries", where=target.path,
                         fix=f"add {TRIGGER_FILES[0]} ([{{query, should_trigger}}]), EVAL.md '## Should trigger' "
                             "items, or pass --queries FILE")
    out = []
    for i, q in enumerate(queries):
        try:
            out.append(q.resolved(target.name))
        except ValueError as exc:
            raise EvalsError(f"[{i}]: {exc}", where=queries_file or target.path,
                             fix="drop should_trigger (expected_skill decides it) or make them agree") from None
    return out, sources


def evaluate_triggers(
    skill_dir: Path, *, queries_file: Path | None = None, decoys: list[Path] = (), runs: int = 3,
    judge: Judge | None = None, optimise_description: bool = False, seed: int = 0, test_share: float = 0.4,
) -> TriggerReport:
    """Run the trigger evaluation of one skill (see the module docstring)."""
    if runs < 1:
        raise EvalsError("runs must be at least 1", where="--runs", fix="give --runs 1 or more")
    target = load_skill(Path(skill_dir))
    queries, sources = load_queries(target, queries_file)
    router: Router = ModelRouter(judge) if judge is not None else Router()
    notes = []
    if router.deterministic and runs > 1:
        # Repeating one deterministic decision would only narrow the intervals falsely.
        notes.append(f"{runs} runs asked; the reference router is deterministic, so each query is decided once")
        runs = 1
    decoy_skills = [load_skill(d) for path in decoys for d in discover_skill_dirs(path)]
    decoy_skills = [d for d in decoy_skills if d.name != target.name]

    async def go() -> TriggerReport:
        modes = [await _run_mode("isolation", target, [_card(target)], queries, router, runs)]
        if decoy_skills:
            cards = sorted([_card(target)] + [_card(d) for d in decoy_skills], key=lambda c: c.key)
            modes.append(await _run_mode("group", target, cards, queries, router, runs))
        report = TriggerReport(skill=target.name, router=router.label, runs=runs, sources=sources, modes=modes,
                               notes=notes)
        if optimise_description:
            report.candidates, report.chosen, report.split = await optimise(
                target, queries, router_evaluator(target, router, runs), judge=judge, seed=seed,
                test_share=test_share)
        return report

    return asyncio.run(go())
