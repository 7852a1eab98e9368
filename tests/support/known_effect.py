"""The known-effect suite: skills whose true effect is known by construction, run through
the real pipeline (config compose -> emit -> Harbor job -> graders -> stats -> report and
its CI gate), so a sign the instrument gets wrong fails a test.

The skills (``skills/``, each with its own cases and fixtures):

- ``ledger-verifier`` (helpful): its script computes the position-weighted ledger
  checksum the verifier checks; without it an agent cannot know the house rule. It
  refuses one case's ``LEDGER v2`` file (exit 2), so that case fails in both arms:
  the lift varies across cases and the case-clustered interval exists.
- ``line-count-tips`` (useless): advice with no command; an agent that reads it does
  what it would have done anyway, so both arms answer alike. Every paired difference is
  0, which the verdict logic reports as "no variation observed" (no interval); the gate
  fails on a lift of 0 below its threshold. Its composite lift is still positive
  (activation and routing are process metrics the baseline cannot earn): the reason the
  headline is the task outcome.
- ``quick-line-count`` (harmful): its script counts newline characters and confidently
  prints one line too few for a file without a trailing newline (five of its six
  cases); the baseline counts every line right.
- decoy ``ledger-checksum`` (confusable, ``decoys/``): its name is what the ledger
  prompts ask for, so in group mode it takes the route from ``ledger-verifier`` (and its
  plain-sum checksum is wrong): the paired routing premium is negative.

Verdicts only a real effect can pass (issue 22), each skill in its own isolation study gated
with ``aces-bench report <dir> --fail-under-lift 0.05`` (``run_verdict_suite``):

- ``flood-checksum`` (grader gaming): echoes every token of its input, then every number
  0..2000; strict answer checks pass none of its cases: "not enough cases", lift 0, and its
  case without assertions is abstained on by the heuristic judge (left out of the headline,
  counted; the gate reads that with-skill side as not passed: a tie with the failing baseline);
- ``unstable-line-count``: right on 3 cases the baseline gets wrong, hangs its trial on 2
  and kills its own sandbox on 1 where the baseline is right: the failures are its losses
  (intention to treat), lift 0 where the old per-protocol view said +1: "not enough cases";
- ``eager-error-count`` (over-triggering): right on its 6 cases, but its description claims
  every question about a file's lines, so it fires on 3 should-not-use cases and breaks
  them: "harms should-not-use cases", false activation 100%;
- ``tally-checksum``: deterministic, wins all 5 cases: "helps" (betting p = 0.046 at 0.05), with
  and without ``--lower-bound``;
- ``one-case-tally``: helpful on its one case: "not enough cases" (one pair never passes).

``run_suite`` runs one harness over all of it: an isolation study of the three targets
(with the null calibration arm, ``study.controls=[null]``: its lift must be 0)
and a group study of ``ledger-verifier`` with the decoy, side by side under one folder,
then ``aces-bench report`` on the isolation study with the gate and on the folder
(routing premium). ``validate.py`` (``make validate``) prints the table; the tests in
``test_known_effect.py`` assert it.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from aces_bench.analysis.cli import main as report_main
from aces_bench.analysis.gate import gate_verdicts, settings_for
from aces_bench.config.compose import compose_spec
from aces_bench.records.summary import ReportSummary, read_summary
from aces_bench.study.entry import run_study

# The known-effect suite's folder: its skills and decoys.
HERE = Path(__file__).resolve().parents[1] / "known_effect"
SKILLS = HERE / "skills"
DECOYS = HERE / "decoys"
HELPFUL, USELESS, HARMFUL = "ledger-verifier", "line-count-tips", "quick-line-count"
CONFUSABLE = "ledger-checksum"
# What each skill is by construction; the table prints it beside what was recovered.
KINDS = {HELPFUL: "helpful", USELESS: "useless", HARMFUL: "harmful"}
GATE_THRESHOLD = 0.05
HEADLINE = "outcome"


@dataclass(frozen=True)
class Recovered:
    """One recovered effect: its estimate, 95% interval (None when undefined) and why not."""

    name: str
    kind: str
    statistic: str
    estimate: float | None
    ci_lo: float | None
    ci_hi: float | None
    n: int
    note: str | None = None
    gate: str | None = None  # "pass" / "FAIL" under --fail-under-lift, None when not gated

    @property
    def sign(self) -> str:
        if self.estimate is None:
            return "?"
        return "+" if self.estimate > 0 else "-" if self.estimate < 0 else "0"

    @property
    def excludes_zero(self) -> bool:
        return self.ci_lo is not None and self.ci_hi is not None and (self.ci_lo > 0 or self.ci_hi < 0)


@dataclass(frozen=True)
class SuiteRun:
    harness: str
    out: Path
    effects: dict[str, Recovered]
    composite: dict[str, float | None]  # diagnostic composite lift per skill
    gate_rc: int
    gate_lines: list[str]
    null: Recovered  # the helpful skill's null (A/A) arm: the instrument's own lift
    isolation: ReportSummary
    combined: ReportSummary


def study_overrides(harness: Sequence[str], *, skills: Sequence[Path], workspace: str, decoys: Sequence[Path] = (),
                    root_parent: Path | None = None, n_concurrent: int = 8) -> list[str]:
    """Hydra overrides of one known-effect study (no report: the suite builds it).

    Eight trials at once: terminus-2 trials mostly wait on the terminal, so on two cores
    more concurrency shortens the suite."""
    out = [*harness, "skill=custom", f"skill.paths=[{','.join(map(str, skills))}]",
           f"workspace={workspace}", "report=false", f"study.n_concurrent={n_concurrent}"]
    if decoys:
        out += ["decoys=none", "decoys.name=known-confusable", f"decoys.paths=[{','.join(map(str, decoys))}]"]
    if root_parent is not None:
        out.append(f"+backend.kwargs.root_parent={root_parent}")
    return out


def _lift(summary: ReportSummary, skill: str, outcome: str):
    for row in summary.by_skill:
        if row.group.get("skill") == skill and row.outcome == outcome:
            return row
    return None


def _report(results: Path, out: Path, *gate: str) -> tuple[int, list[str]]:
    """``aces-bench report`` in-process; (exit code, the lines it printed)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        rc = report_main([str(results), "--out", str(out), *gate])
    return rc, buf.getvalue().splitlines()


def run_suite(harness: Sequence[str], out: Path, *, label: str, root_parent: Path | None = None) -> SuiteRun:
    """Run the known-effect suite on one harness (its Hydra overrides) under ``out``."""
    runs = out / "runs"
    if runs.exists():
        shutil.rmtree(runs)
    iso, group = runs / "isolation", runs / "group"
    targets = [SKILLS / HELPFUL, SKILLS / USELESS, SKILLS / HARMFUL]
    # The isolation study also runs the null arm (the baseline again, as if it were the treatment).
    run_study(compose_spec([*study_overrides(harness, skills=targets, workspace="isolation", root_parent=root_parent),
                            "study.controls=[null]"], output_dir=iso))
    run_study(compose_spec(study_overrides(harness, skills=[SKILLS / HELPFUL], workspace="group",
                                           decoys=[DECOYS / CONFUSABLE], root_parent=root_parent),
                           output_dir=group))
    # Three separate questions (one skill helps, one does nothing, one harms), so each is gated on
    # its own (--per-skill); the family default is the multi-skill A/A study's to show.
    gate_rc, gate_lines = _report(iso, out / "report-isolation", "--fail-under-lift", str(GATE_THRESHOLD),
                                  "--per-skill")
    rc, lines = _report(runs, out / "report-combined")
    if rc != 0:
        raise RuntimeError("report on the combined runs failed:\n" + "\n".join(lines))
    isolation = read_summary(out / "report-isolation" / "summary.json")
    combined = read_summary(out / "report-combined" / "summary.json")

    failing = {line.split()[1].rstrip(":") for line in gate_lines if line.startswith("FAIL ")}
    effects: dict[str, Recovered] = {}
    composite: dict[str, float | None] = {}
    for skill, kind in KINDS.items():
        row = _lift(isolation, skill, HEADLINE)
        comp = _lift(isolation, skill, "composite")
        composite[skill] = comp.lift if comp else None
        effects[skill] = Recovered(
            name=skill, kind=kind, statistic=f"{HEADLINE} lift", estimate=row.lift if row else None,
            ci_lo=row.ci_lo if row else None, ci_hi=row.ci_hi if row else None, n=row.n if row else 0,
            note=row.ci_note if row else "no row", gate="FAIL" if skill in failing else "pass")
    null = next((r for r in isolation.controls_by_skill if r.group.get("skill") == HELPFUL and r.arm == "null"
                 and r.outcome == HEADLINE), None)
    null_effect = Recovered(name=f"{HELPFUL} null arm", kind="none (A/A)", statistic="null lift",
                            estimate=null.lift if null else None, ci_lo=null.ci_lo if null else None,
                            ci_hi=null.ci_hi if null else None, n=null.n if null else 0,
                            note=null.ci_note if null else "no null-arm row")
    premium = next((r for r in combined.routing_premium if r.get("outcome") == HEADLINE), {})
    effects[CONFUSABLE] = Recovered(
        name=f"{CONFUSABLE} (decoy of {HELPFUL})", kind="confusable", statistic="routing premium",
        estimate=premium.get("premium"), ci_lo=premium.get("ci_lo"), ci_hi=premium.get("ci_hi"),
        n=int(premium.get("n_matched") or 0), note=premium.get("note"))
    return SuiteRun(harness=label, out=out, effects=effects, composite=composite, gate_rc=gate_rc,
                    gate_lines=gate_lines, null=null_effect, isolation=isolation, combined=combined)


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"


def format_table(runs: Sequence[SuiteRun]) -> str:
    """The table ``make validate`` prints: one row per harness and known effect."""
    head = ("harness", "skill", "true effect", "statistic", "sign", "estimate", "95% CI", "n", "gate", "note")
    rows = [head]
    for run in runs:
        for e in [*run.effects.values(), run.null]:
            ci = f"[{_num(e.ci_lo)}, {_num(e.ci_hi)}]" if e.ci_lo is not None else "none"
            note = e.note or ""
            if e.name in run.composite:
                note = "; ".join(x for x in (note, f"composite lift {_num(run.composite[e.name])} (diagnostic)") if x)
            rows.append((run.harness, e.name, e.kind, e.statistic, e.sign, _num(e.estimate), ci, str(e.n),
                         e.gate or "-", note))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1] for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 4)
    return "\n".join(lines)


def problems(run: SuiteRun) -> list[str]:
    """Where the recovered effects disagree with what the skills are by construction."""
    e = run.effects
    out = []
    h, u, x, c = e[HELPFUL], e[USELESS], e[HARMFUL], e[CONFUSABLE]
    if not (h.sign == "+" and h.excludes_zero and h.gate == "pass"):
        out.append(f"helpful {h.name}: wanted lift > 0 with an interval excluding 0 and a passing gate, got "
                   f"{_num(h.estimate)} [{_num(h.ci_lo)}, {_num(h.ci_hi)}] gate {h.gate}")
    contains_zero = (u.ci_lo is None and u.estimate == 0) or (u.ci_lo is not None and u.ci_lo <= 0 <= u.ci_hi)
    if not (contains_zero and u.gate == "FAIL"):
        out.append(f"useless {u.name}: wanted a lift of 0 (interval containing 0, or none: no variation) and a "
                   f"failing gate, got {_num(u.estimate)} [{_num(u.ci_lo)}, {_num(u.ci_hi)}] gate {u.gate}")
    if not (x.sign == "-" and x.gate == "FAIL"):
        out.append(f"harmful {x.name}: wanted lift < 0 and a failing gate, got {_num(x.estimate)} gate {x.gate}")
    n = run.null
    if not ((n.ci_lo is None and n.estimate == 0) or (n.ci_lo is not None and n.ci_lo <= 0 <= n.ci_hi)):
        out.append(f"null arm of {HELPFUL}: wanted an interval containing 0 (or none: no variation), got "
                   f"{_num(n.estimate)} [{_num(n.ci_lo)}, {_num(n.ci_hi)}] ({n.note})")
    if c.sign != "-":
        out.append(f"confusable {c.name}: wanted a routing premium < 0, got {_num(c.estimate)} ({c.note})")
    return out


# --- verdicts only a real effect can pass (issue 22) -------------------------------------------

GAMING, CRASHING, OVER_TRIGGERING, ALL_WIN, SINGLE = (
    "flood-checksum", "unstable-line-count", "eager-error-count", "tally-checksum", "one-case-tally")
VERDICT_KINDS = {
    GAMING: "grader-gaming (echoes its input, then every number 0..2000)",
    CRASHING: "right on 3 cases, hangs its trial on 2, kills its sandbox on 1",
    OVER_TRIGGERING: "right on its 6 cases, fires on 3 should-not-use cases and breaks them",
    ALL_WIN: "deterministic, wins all 5 cases",
    SINGLE: "helpful, one case",
}
# What the gate must say at --fail-under-lift 0.05 on every harness (docs/gate.md).
EXPECTED_VERDICT = {GAMING: "not enough cases", CRASHING: "not enough cases",
                    OVER_TRIGGERING: "harms should-not-use cases", ALL_WIN: "helps", SINGLE: "not enough cases"}
# The reference agent waits on a command for 120 s: a hang ends its trial at this timeout. The
# scripted terminus-2 model gives up on a command after 12 polls and finishes with the empty
# answer file the hung command left: a missing answer, the arm's failure as well.
CRASH_TIMEOUT_SEC = 20


@dataclass(frozen=True)
class GateOutcome:
    """One skill's own study, gated as a user would: ``aces-bench report <dir> --fail-under-lift 0.05``."""

    skill: str
    kind: str
    verdict: str
    passed: bool
    rc: int
    rc_lower_bound: int
    lines: list[str]
    lift: float | None  # the headline (intention to treat)
    lift_per_protocol: float | None
    p_value: float | None
    n_cases: int
    n_excluded: int
    false_activation: float | None
    summary: ReportSummary


def run_verdict_suite(harness: Sequence[str], out: Path, *, root_parent: Path | None = None,
                      crash_timeout: int | None = CRASH_TIMEOUT_SEC) -> dict[str, GateOutcome]:
    """Each of the issue-22 skills in its own isolation study (a user studies one skill), gated."""
    runs = out / "verdict-runs"
    if runs.exists():
        shutil.rmtree(runs)
    result = {}
    for skill in VERDICT_KINDS:
        study = runs / skill
        extra = [f"workspace.agent_timeout_sec={crash_timeout}"] if skill == CRASHING and crash_timeout else []
        run_study(compose_spec([*study_overrides(harness, skills=[SKILLS / skill], workspace="isolation",
                                                 root_parent=root_parent), *extra], output_dir=study))
        rc, lines = _report(study, out / f"report-{skill}", "--fail-under-lift", str(GATE_THRESHOLD))
        rc_lb, _ = _report(study, out / f"report-{skill}-lb", "--fail-under-lift", str(GATE_THRESHOLD), "--lower-bound")
        summary = read_summary(out / f"report-{skill}" / "summary.json")
        (v,) = gate_verdicts(summary, settings_for(summary, threshold=GATE_THRESHOLD))
        head = _lift(summary, skill, HEADLINE)
        pp = _lift(summary, skill, "outcome_per_protocol")
        a = summary.intention_to_treat
        result[skill] = GateOutcome(
            skill=skill, kind=VERDICT_KINDS[skill], verdict=v.verdict, passed=v.passed, rc=rc, rc_lower_bound=rc_lb,
            lines=lines, lift=head.lift if head else None, lift_per_protocol=pp.lift if pp else None,
            p_value=v.p_value, n_cases=v.n_cases, n_excluded=a.n_excluded if a else 0,
            false_activation=v.negative.false_activation, summary=summary)
    return result


def format_verdicts(label: str, outcomes: dict[str, GateOutcome]) -> str:
    rows = [("harness", "skill", "by construction", "gate verdict", "exit", "lift (ITT)", "per protocol", "p",
             "cases", "excluded")]
    for o in outcomes.values():
        rows.append((label, o.skill, o.kind, o.verdict, f"{o.rc}/{o.rc_lower_bound}", _num(o.lift),
                     _num(o.lift_per_protocol), "n/a" if o.p_value is None else f"{o.p_value:.4g}", str(o.n_cases),
                     str(o.n_excluded)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


def verdict_problems(outcomes: dict[str, GateOutcome]) -> list[str]:
    out = []
    for skill, want in EXPECTED_VERDICT.items():
        o = outcomes[skill]
        should_pass = want == "helps"
        if o.verdict != want or o.passed != should_pass or (o.rc == 0) != should_pass:
            out.append(f"{skill}: wanted {want!r} (exit {0 if should_pass else 1}), got {o.verdict!r} (exit {o.rc})")
    if outcomes[ALL_WIN].rc_lower_bound != 0:
        out.append(f"{ALL_WIN}: wanted a pass with --lower-bound too, got exit {outcomes[ALL_WIN].rc_lower_bound}")
    return out
