"""The deterministic ``skill_execution`` metric: did the agent use the skill as designed.

Four sub-checks, each 0..1 or None (not applicable, left out of the mean and
said so in the evidence):

- ``activation``: the expected skill was activated - its SKILL.md read (``cat``,
  ``head``, ``sed``, ``Read``, ``read_file``, ``view``...) from the skills dir or a
  harness copy, or a harness activation call (``activate_skill``, ``Skill``) naming
  it. A skill in the case's ``acceptable_skills`` counts too.
- ``execution``: a command invoked the case's ``expected_script`` (relative to the
  skill folder, any prefix): ran it, imported it from Python (``sys.path``,
  ``PYTHONPATH``, ``python -m``, ``from scripts.x import`` with the cwd in the
  skill, or a script the agent wrote that does so), or ran a copy of it (a traced
  ``cp``/``cat >``, or a file with its content: ``GradingInput.skill_digests``).
  1 when an invocation succeeded (or reported no status and printed no failure),
  0.5 when every invocation failed, 0 when none happened. Not applicable when the
  case names no script. A script the agent wrote itself outside the skill folders
  does not count; in the baseline, naming the absent target's files runs nothing.
- ``workflow_order``: the skill was activated before the script first ran.
  Not applicable without an expected script or without an invocation.
- ``error_recovery``: share of failed calls followed, within the next
  ``RECOVERY_WINDOW`` calls, by a successful call, where an identical repeat of
  the failed call that fails again is not a recovery. Not applicable when no call
  failed.

Negative controls (``expected_skill`` null) score on *not* triggering the suite's
skill: ``activation`` is 1 when the skill was not activated and ``execution`` is 1
when none of its scripts ran; order and recovery are not applicable.

Baseline condition: the same functions run unchanged. The target skill is absent,
so activation and execution are 0 for positive cases (and 1 for negative
controls); the paired difference is the point.
"""

from __future__ import annotations

import fnmatch
import hashlib
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from aces_bench.cases import EvalCase
from aces_bench.graders.base import GraderContext, GradingInput
from aces_bench.graders.shell import python_imports
from aces_bench.graders.tool_calls import Call, TraceView, skill_glob_ref, skill_ref
from aces_bench.inputs.skills import evaluation_asset
from aces_bench.inputs.skilltree import read_regular, walk
from aces_bench.inputs.trialfiles import read_trial_file
from aces_bench.records.results import Evidence, MetricResult

METRIC = "skill_execution"
# Sub-score (and evidence check) names; other modules import these, never the bare strings.
ACTIVATION, EXECUTION, WORKFLOW_ORDER, ERROR_RECOVERY = "activation", "execution", "workflow_order", "error_recovery"
SUB_CHECKS = (ACTIVATION, EXECUTION, WORKFLOW_ORDER, ERROR_RECOVERY)
RECOVERY_WINDOW = 5
MAX_FAILURE_EVIDENCE = 10


def norm_skill(name: str) -> str:
    """Skill names compare case-insensitively with '-' and '_' equal (harness copies differ); a plugin's
    namespace (claude-code's ``table-tools:row-count``) is left out."""
    return name.strip().rsplit(":", 1)[-1].lower().replace("_", "-")


@dataclass(frozen=True, slots=True)
class Activation:
    call: Call
    skill: str
    how: str
    failed: str | None = None
    """Why the attempt did not activate the skill (the read or the call failed); None for an activation."""


FAILURE_MARKERS = re.compile(
    r"Traceback \(most recent call last\)|exit code:?\s*[1-9]\d*|command not found|"
    r"No such file or directory|^Error: (?!\(none\))",
    re.IGNORECASE | re.MULTILINE,
)
"""What a run without an exit status (terminus-2 keystrokes, plain logs) prints when it failed."""
_FRONTMATTER_NAME = re.compile(r"^name:\s*[\"']?([A-Za-z0-9][\w.-]*)", re.MULTILINE)


READ_FAILURE = re.compile(
    r"No such file or directory|cannot (?:open|access|read|stat)|Permission denied|Is a directory|"
    r"(?:file|path|skill)(?: [^\n]{0,80})? (?:not found|does not exist)|not a (?:regular )?file|"
    r"^(?:Error|error):|Unknown skill|no skill named|ENOENT|EACCES|EISDIR",
    re.IGNORECASE | re.MULTILINE,
)
"""What a failed read or skill activation prints when the harness gave no failure flag."""


def _shows_skill(output: str, skill: str) -> bool:
    """Whether ``output`` holds the skill's own SKILL.md text (its frontmatter ``name:`` line)."""
    want = norm_skill(skill)
    return any(norm_skill(n) == want for n in _FRONTMATTER_NAME.findall(output))


def _attempt_failed(a: Activation, path: str | None, *, require_output: bool = False) -> str | None:
    """Why attempt ``a`` did not show the agent the skill, or None when it did (status and output checked).

    An output holding the skill's frontmatter shows it, whatever else the screen says.
    Otherwise a call the harness flagged failed (an exit status, an error flag) failed,
    and one with no flag failed when its output says so (``No such file or directory``,
    ``Unknown skill``...) on a line naming the file or the skill (a terminal screen
    shows earlier commands' errors too), or anywhere in a read tool's short reply. When
    one call read several files, only the file its error names failed. A call that
    recorded no output at all is taken at its word unless ``require_output``:
    contamination needs positive evidence that the agent saw text.
    """
    c = a.call
    output = c.output or ""
    if output and _shows_skill(output, a.skill):
        return None
    names = [n for n in (path, path and path.rsplit("/", 2)[-2] + "/SKILL.md", a.skill,
                         path and "SKILL.md" if c.kind != "activate" else None) if n]
    failures = [ln.strip() for ln in output.splitlines() if READ_FAILURE.search(ln)]
    own = [ln for ln in failures if any(n in ln for n in names)]
    several = len(c.reads) > 1 and path is not None
    if c.failed is True and (not several or own or not output.strip()):
        line = own[0] if own else next((ln.strip() for ln in output.splitlines() if ln.strip()), "")
        return f"failed ({f'exit {c.exit_code}' if c.exit_code is not None else 'error reported'}" \
               + (f": {line[:120]}" if line else "") + ")"
    if own:
        return f"failed ({own[0][:120]})"
    if failures and c.kind in ("read", "activate") and len(output.strip()) < 400:
        return f"failed ({failures[0][:120]})"  # a read tool's short error reply, not flagged by the harness
    if require_output and not output.strip():
        return "returned no text"
    return None


def activations(calls: tuple[Call, ...] | list[Call], skills_dir: str,
                attempts: list[Activation] | None = None, *, require_output: bool = False) -> list[Activation]:
    """Every skill activation: a SKILL.md read or a harness activation call that succeeded.

    Success is checked on the call's exit status or error flag and on its output (see
    ``_attempt_failed``): a ``cat /skills/x/SKILL.md`` that printed "No such file or
    directory" read nothing. Failed attempts are appended to ``attempts`` (when given),
    each with ``failed`` saying why, so a grader can record them apart.
    """
    out: list[Activation] = []

    def add(a: Activation, path: str | None = None) -> None:
        why = _attempt_failed(a, path, require_output=require_output)
        if why is None:
            out.append(a)
        elif attempts is not None:
            attempts.append(Activation(a.call, a.skill, a.how, failed=why))

    for c in calls:
        if c.activated:
            add(Activation(c, c.activated, f"{c.tool} tool call"))
            continue
        for p in c.reads:
            ref = skill_ref(p, skills_dir)
            if ref is not None and ref.rel.lower() == "skill.md":
                add(Activation(c, ref.skill, f"read of {p} via {c.tool}"), p)
                continue
            glob = skill_glob_ref(p, skills_dir)
            if glob is not None and fnmatch.fnmatchcase("SKILL.md", glob.rel or "-"):
                # Which skills the glob read is in its output: each SKILL.md's frontmatter name.
                for name in _FRONTMATTER_NAME.findall(c.output or ""):
                    if fnmatch.fnmatchcase(name, glob.skill):
                        out.append(Activation(c, name, f"read of {p} (glob) via {c.tool}"))
    return out


FAILED_ATTEMPT = f"{ACTIVATION}.failed_attempt"
MAX_ATTEMPT_EVIDENCE = 5


def failed_attempt_evidence(tried: list[Activation]) -> list[Evidence]:
    """Evidence for activation attempts that failed: recorded apart, never counted as activations."""
    ev = [Evidence(check=FAILED_ATTEMPT, passed=False, step_id=a.call.step_id,
                   detail=f"attempt to activate {a.skill!r} at {a.call.where} ({a.how}) {a.failed}: not an activation")
          for a in tried[:MAX_ATTEMPT_EVIDENCE]]
    if len(tried) > MAX_ATTEMPT_EVIDENCE:
        ev.append(Evidence(check=FAILED_ATTEMPT, passed=False,
                           detail=f"{len(tried) - MAX_ATTEMPT_EVIDENCE} more failed attempts not listed"))
    return ev


def happened(result: MetricResult | None, check: str, *, negative_control: bool) -> bool | None:
    """Whether the target was activated (``ACTIVATION``) or the expected script ran cleanly
    (``EXECUTION``), read from a ``skill_execution`` result: the one rule every reader uses
    (trials table, process rates, report triage).

    A positive case scores 1 for it happening (0.5 execution: invoked, every run failed,
    so not clean); a negative control scores 1 for it *not* happening (the suite's skill
    left alone), so its sub-score is read the other way round. None: not scored, or not
    applicable (no expected script).
    """
    if result is None or result.score is None:
        return None
    value = result.sub_scores.get(check)
    if value is None:
        return None
    return value < 1.0 if negative_control else value >= 1.0


def target_activated(calls: tuple[Call, ...] | list[Call], skill: str, skills_dir: str) -> bool:
    """Whether ``calls`` activated ``skill`` (``activations``' rule), for readers without a grade."""
    return any(norm_skill(a.skill) == norm_skill(skill) for a in activations(calls, skills_dir))


def text_digest(text: str) -> str:
    """Digest of a file's text as a copy would carry it (line endings and trailing space folded)."""
    return hashlib.sha256(text.replace("\r\n", "\n").rstrip().encode("utf-8", "replace")).hexdigest()


def skill_file_digests(skill_dir: Path, name: str) -> dict[str, str]:
    """``text_digest`` -> ``<name>/<path>`` of every file of a staged skill (its evals left out)."""
    out: dict[str, str] = {}
    for entry in walk(skill_dir):  # the one walk: links out of the skill are not followed
        rel = entry.rel
        if not entry.is_file or evaluation_asset(rel) is not None or rel == "SKILL.md" or entry.size > 1 << 20:
            continue
        try:
            out.setdefault(text_digest(read_regular(entry.path).decode("utf-8")), f"{name}/{rel}")
        except (OSError, UnicodeDecodeError):
            continue
    return out


@dataclass(frozen=True)
class Provenance:
    """Where files outside the skill folders came from: copies of a staged skill's files.

    ``digests``: ``skill_file_digests`` of the skills staged in this arm; ``workspace``:
    the retained final workspace on the host, mounted at ``workdir`` in the trial.
    """

    workdir: str
    digests: Mapping[str, str] = field(default_factory=dict)
    workspace: Path | None = None

    def retained_digest(self, path: str) -> str | None:
        root = self.workdir.rstrip("/") + "/"
        if self.workspace is None or not path.startswith(root):
            return None
        rel = path[len(root):]
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            return None  # a path named in the trace, not a file of the retained workspace
        read = read_trial_file(self.workspace / rel, limit=1 << 20)
        if not read.ok or read.truncated:
            return None
        try:
            return text_digest(read.data.decode("utf-8"))
        except UnicodeDecodeError:
            return None


class _Origins:
    """Follows copies through a trace: which skill file a path outside the skill folders holds."""

    def __init__(self, skills_dir: str, provenance: Provenance | None):
        self.skills_dir = skills_dir.rstrip("/")
        self.prov = provenance  # None: no digests, no retained workspace
        self.copied: dict[str, str] = {}  # destination -> source (the source in a skill folder)
        self.content: dict[str, str] = {}  # path -> text digest, for files written whole
        self.text: dict[str, str] = {}  # path -> text of a Python file written whole

    def origin(self, path: str) -> tuple[str, str] | None:
        """(the skill file ``path`` is a copy of, how that is known), or None."""
        for dst, src in self.copied.items():
            if path == dst or path.startswith(dst + "/"):
                return src + path[len(dst):], f"copied from {src}"
        digest = self.content.get(path) or (self.prov.retained_digest(path) if self.prov else None)
        rel = self.prov.digests.get(digest) if digest and self.prov else None
        if rel is not None:
            return f"{self.skills_dir}/{rel}", f"same content as {rel}"
        return None

    def update(self, c: Call) -> None:
        for src, dst in c.copies:
            from_skill = skill_ref(src, self.skills_dir) is not None
            known = self.origin(src)
            if from_skill or known:
                self.copied[dst] = src if from_skill else known[0]
            else:
                self.copied.pop(dst, None)
        for path, text in c.files:
            self.content[path] = text_digest(text)
            self.copied.pop(path, None)
            if path.endswith(".py"):
                self.text[path] = text

    def imports_of(self, c: Call) -> tuple[str, ...]:
        """What the Python files ``c`` ran import, where the trace shows their text (the agent
        wrote them): ``sys.path.append('<skill>/scripts'); from tool import X`` in a script."""
        out: list[str] = []
        for p in c.execs:
            text = self.text.get(p)
            if text is not None:
                out += python_imports(text, [posixpath.dirname(p)], posixpath.dirname(p))
        return tuple(out)


def script_invocations(
    calls: tuple[Call, ...] | list[Call], script: str, skills: set[str], skills_dir: str,
    *, absent: str | None = None, provenance: Provenance | None = None,
) -> list[tuple[Call, str]]:
    """Calls that ran ``script`` (relative to a skill folder) from one of ``skills``.

    Ran: executed it (``python .../scripts/x.py``, ``./x.sh``), imported it from Python
    (``sys.path.append('<skill>/scripts'); import x``, ``PYTHONPATH=...``, ``python -m
    scripts.x`` or ``from scripts.x import y`` with the cwd in the skill), or ran a copy
    of it from elsewhere (``cp <skill>/scripts/x.py /tmp/y.py && python /tmp/y.py``; a
    file written with the script's content, or left in the workspace with it, by
    ``provenance``'s content digests).

    ``absent``: a skill not staged in this arm (the target, in the baseline). A call
    naming its script under the study's skills dir ran nothing: the file was not there.
    """
    suffix = "/" + script.lstrip("./")
    missing = f"{skills_dir.rstrip('/')}/{absent}/" if absent else None
    authored: set[str] = set()
    origins = _Origins(skills_dir, None if absent else provenance)
    out: list[tuple[Call, str]] = []
    for c in calls:
        origins.update(c)
        imports = (*c.imports, *origins.imports_of(c))
        for p in (*c.execs, *imports):
            found = origins.origin(p) if skill_ref(p, skills_dir) is None else None
            q = found[0] if found else p
            if not (q.endswith(suffix) or q == script):
                continue
            ref = skill_ref(q, skills_dir)
            if ref is not None and norm_skill(ref.skill) not in skills:
                continue
            if missing is not None and q.startswith(missing):
                continue
            if ref is None and (p in authored or p in imports):
                continue  # the agent's own file, or a module that may not exist
            out.append((c, f"{p} ({found[1]})" if found else p))
            break
        authored.update(p for p in c.writes if skill_ref(p, skills_dir) is None)
    return out


@dataclass
class ExecutionFacts:
    """Sub-scores and evidence over a (possibly truncated) list of calls."""

    sub_scores: dict[str, float | None]
    evidence: list[Evidence] = field(default_factory=list)
    first_pass_index: dict[str, int] = field(default_factory=dict)

    @property
    def score(self) -> float | None:
        vals = [v for v in self.sub_scores.values() if v is not None]
        return round(sum(vals) / len(vals), 6) if vals else None


def analyse(
    calls: tuple[Call, ...] | list[Call],
    case: EvalCase,
    target_skill: str,
    skills_dir: str,
    condition: str,
    *,
    recovery: bool = True,
    target_staged: bool = False,
    provenance: Provenance | None = None,
) -> ExecutionFacts:
    """The four sub-checks over ``calls`` (pure). ``first_pass_index`` records the
    call index at which each passing check first passed, for first-attempt grading."""
    if case.is_negative_control:
        return _negative(calls, target_skill, skills_dir)
    expected = {norm_skill(case.expected_skill or target_skill)} | {norm_skill(s) for s in case.acceptable_skills}
    facts = ExecutionFacts(sub_scores={})
    ev = facts.evidence
    tried: list[Activation] = []
    acts = [a for a in activations(calls, skills_dir, tried) if norm_skill(a.skill) in expected]
    ev += failed_attempt_evidence([a for a in tried if norm_skill(a.skill) in expected])
    if acts:
        a = acts[0]
        facts.sub_scores["activation"] = 1.0
        facts.first_pass_index["activation"] = a.call.index
        ev.append(Evidence(check="activation", passed=True, step_id=a.call.step_id,
                           detail=f"skill {a.skill!r} activated at {a.call.where} ({a.how})"))
    else:
        facts.sub_scores["activation"] = 0.0
        why = " (baseline: the skill is absent by design)" if condition == "baseline" else ""
        ev.append(Evidence(check="activation", passed=False,
                           detail=f"no activation of {sorted(expected)} (no SKILL.md read, no activation call){why}"))

    script = case.expected_script
    first_exec: int | None = None
    if not script:
        facts.sub_scores["execution"] = None
        ev.append(Evidence(check="execution", passed=None, detail="not applicable: the case names no expected_script"))
    else:
        inv = script_invocations(calls, script, expected, skills_dir,
                                 absent=target_skill if condition == "baseline" and not target_staged else None,
                                 provenance=provenance)
        ok = [(c, p) for c, p in inv
              if c.failed is False or (c.failed is None and not FAILURE_MARKERS.search(c.output or ""))]
        if ok:
            c, p = ok[0]
            facts.sub_scores["execution"] = 1.0
            facts.first_pass_index["execution"] = c.index
            status = "succeeded" if c.failed is False else "ran (no exit status reported)"
            ev.append(Evidence(check="execution", passed=True, step_id=c.step_id,
                               detail=f"{p} {status} at {c.where} ({len(inv)} invocation(s))"))
        elif inv:
            facts.sub_scores["execution"] = 0.5
            ev.append(Evidence(check="execution", passed=False, step_id=inv[0][0].step_id,
                               detail=f"{script} invoked {len(inv)} time(s), every invocation failed"))
        else:
            facts.sub_scores["execution"] = 0.0
            ev.append(Evidence(check="execution", passed=False, detail=f"{script} was never invoked"))
        first_exec = inv[0][0].index if inv else None

    if not script or first_exec is None:
        facts.sub_scores["workflow_order"] = None
        ev.append(Evidence(check="workflow_order", passed=None,
                           detail="not applicable: " + ("no expected_script" if not script else "the script never ran")))
    elif acts and acts[0].call.index <= first_exec:
        facts.sub_scores["workflow_order"] = 1.0
        facts.first_pass_index["workflow_order"] = first_exec
        ev.append(Evidence(check="workflow_order", passed=True, step_id=calls_by_index(calls, first_exec).step_id,
                           detail=f"skill read at {acts[0].call.where} before the script first ran"))
    else:
        facts.sub_scores["workflow_order"] = 0.0
        c = calls_by_index(calls, first_exec)
        ev.append(Evidence(check="workflow_order", passed=False, step_id=c.step_id,
                           detail=f"script ran at {c.where} before the skill was read"
                                  + ("" if acts else " (the skill was never read)")))
    if recovery:
        score, rec_ev = error_recovery(calls)
        facts.sub_scores["error_recovery"] = score
        ev.extend(rec_ev)
    else:
        facts.sub_scores["error_recovery"] = None
    return facts


def calls_by_index(calls, index: int) -> Call:
    for c in calls:
        if c.index == index:
            return c
    raise KeyError(index)


def _negative(calls, target_skill: str, skills_dir: str) -> ExecutionFacts:
    target = norm_skill(target_skill)
    facts = ExecutionFacts(sub_scores={})
    tried: list[Activation] = []
    acts = [a for a in activations(calls, skills_dir, tried) if norm_skill(a.skill) == target]
    facts.evidence += failed_attempt_evidence([a for a in tried if norm_skill(a.skill) == target])
    if acts:
        facts.sub_scores["activation"] = 0.0
        facts.evidence.append(Evidence(check="activation", passed=False, step_id=acts[0].call.step_id,
                                       detail=f"negative control: skill {target_skill!r} was triggered at "
                                              f"{acts[0].call.where} ({acts[0].how})"))
    else:
        facts.sub_scores["activation"] = 1.0
        facts.first_pass_index["activation"] = -1
        facts.evidence.append(Evidence(check="activation", passed=True,
                                       detail=f"negative control: skill {target_skill!r} was not triggered"))
    runs = [(c, p) for c in calls for p in c.execs
            if (r := skill_ref(p, skills_dir)) is not None and norm_skill(r.skill) == target]
    if runs:
        facts.sub_scores["execution"] = 0.0
        c, p = runs[0]
        facts.evidence.append(Evidence(check="execution", passed=False, step_id=c.step_id,
                                       detail=f"negative control: the skill's script {p} ran at {c.where}"))
    else:
        facts.sub_scores["execution"] = 1.0
        facts.first_pass_index["execution"] = -1
        facts.evidence.append(Evidence(check="execution", passed=True,
                                       detail="negative control: none of the skill's scripts ran"))
    facts.sub_scores["workflow_order"] = None
    facts.sub_scores["error_recovery"] = None
    facts.evidence.append(Evidence(check="workflow_order", passed=None,
                                   detail="not applicable: negative control scores on not triggering the skill"))
    facts.evidence.append(Evidence(check="error_recovery", passed=None,
                                   detail="not applicable: negative control scores on not triggering the skill"))
    return facts


def error_recovery(calls) -> tuple[float | None, list[Evidence]]:
    """Share of failed calls the agent recovered from; None when nothing failed."""
    active = [c for c in calls if c.kind != "control"]
    failures = [i for i, c in enumerate(active) if c.failed is True]
    if not failures:
        return None, [Evidence(check="error_recovery", passed=None, detail="not applicable: no call failed")]
    recovered = 0
    ev: list[Evidence] = []
    for i in failures:
        c = active[i]
        nxt = active[i + 1 : i + 1 + RECOVERY_WINDOW]
        blind = bool(nxt) and nxt[0].tool == c.tool and nxt[0].text == c.text and nxt[0].failed is True
        ok = next((n for n in nxt if n.failed is not True), None)
        good = ok is not None and not blind
        recovered += good
        if len(ev) < MAX_FAILURE_EVIDENCE:
            what = f"{c.tool} {c.text[:80]!r}" if c.text else c.tool
            if good:
                detail = f"{what} failed at {c.where}; recovered by {ok.tool} at {ok.where}"
            elif blind:
                detail = f"{what} failed at {c.where}; repeated unchanged and failed again"
            else:
                detail = f"{what} failed at {c.where}; no successful call followed within {RECOVERY_WINDOW} calls"
            ev.append(Evidence(check="error_recovery", passed=good, step_id=c.step_id, detail=detail))
    if len(failures) > MAX_FAILURE_EVIDENCE:
        ev.append(Evidence(check="error_recovery", passed=None,
                           detail=f"{len(failures) - MAX_FAILURE_EVIDENCE} more failures not listed"))
    return round(recovered / len(failures), 6), ev


def unscored(inp: GradingInput, view: TraceView | None, metric: str) -> MetricResult | None:
    """The unscored result when the trajectory or the case is missing, else None."""
    if view is None:
        reason = f"no trajectory: {inp.trajectory_error or 'not provided'}"
    elif inp.case is None:
        reason = "no case spec: the expected skill and script are unknown"
    else:
        return None
    return MetricResult(metric=metric, score=None, unscored_reason=reason, grader="deterministic")


def result_from(facts: ExecutionFacts, metric: str = METRIC, *, details: dict | None = None) -> MetricResult:
    return MetricResult(metric=metric, score=facts.score, sub_scores=dict(facts.sub_scores),
                        evidence=list(facts.evidence), grader="deterministic", details=details or {})


def grade_skill_execution(inp: GradingInput, view: TraceView | None) -> MetricResult:
    """Score ``skill_execution`` for one trial (see the module docstring)."""
    missing = unscored(inp, view, METRIC)
    if missing is not None:
        return missing
    facts = analyse(view.calls, inp.case, inp.target_skill, inp.skills_dir, inp.condition,
                    target_staged=inp.target_skill in inp.staged_skills, provenance=provenance(inp))
    return result_from(facts)


def provenance(inp: GradingInput) -> Provenance:
    """What this arm's trace is checked against for copies: its staged skills' file digests."""
    return Provenance(digests=inp.skill_digests, workspace=inp.artifacts_dir, workdir=inp.workdir)


def grade(inp: GradingInput, ctx: GraderContext) -> MetricResult:
    """The registered grader (``aces_bench/core/metrics.py``)."""
    return grade_skill_execution(inp, ctx.view)
