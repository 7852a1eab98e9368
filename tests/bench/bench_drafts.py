"""Offline drafts on the public skills with scripts: decidable, satisfied by the skill's script, broken copy caught.

Prints the line of issue 36:
``drafts: decidable X%; satisfied by the skill's script Y%; broken copy caught Z%``
with MISSED after a share below its target (decidable >= 80%, satisfied >= 60%,
caught >= 60%), or a line saying why it was skipped; then a second line stating the
denominators: Y is over the task drafts whose script can run here, and the skills whose
script cannot (a package this interpreter lacks, a web service's credential, a command
the host lacks, a host to reach: the sandbox is offline) are counted apart with their reasons. The scripts are third-party: they
run in the bubblewrap sandbox (network off, a timeout), never on the host, with this
interpreter's packages (the project venv) shown read-only inside, as a task environment
that installed the skill's requirements would have them (``datasets/measure.py``).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
TARGETS = {"decidable": 0.80, "satisfied": 0.60, "caught": 0.60}


def skills_with_scripts(tmp: Path):
    """Each public skill that ships scripts: its documents overlaid with its files, in a scratch copy."""
    docs, files = SHARED / "public-skills", SHARED / "public-skills-files"
    for d in sorted(files.glob("*/*")):
        if not any(p.suffix in (".py", ".sh", ".js", ".mjs") for p in d.glob("scripts/**/*")):
            continue
        rel = d.relative_to(files)
        dest = tmp / rel
        shutil.copytree(docs / rel, dest)
        shutil.copytree(d, dest, dirs_exist_ok=True)
        yield dest


def _pct(name: str, part: int, whole: int) -> str:
    if not whole:
        return "n/a MISSED"
    value = part / whole
    return f"{100 * value:.0f}%" + (" MISSED" if value < TARGETS[name] else "")


def main() -> int:
    if not (SHARED / "public-skills-files").is_dir():
        print(f"drafts: skipped: the shared public skills are absent ({SHARED})")
        return 0
    if shutil.which("bwrap") is None:
        print("drafts: skipped: bubblewrap (bwrap) is not installed; the skills' scripts run only in the sandbox")
        return 0
    sys.path.insert(0, str(ROOT))
    from aces_bench.datasets.create import neighbours
    from aces_bench.datasets.measure import measure_skill
    from aces_bench.inputs.skills import load_skill

    tmp = Path(tempfile.mkdtemp(prefix="bench-drafts-"))
    try:
        totals = dict.fromkeys(("cases", "decidable", "task_drafts", "satisfied", "mutants", "caught", "unrunnable"), 0)
        skills, unrunnable = 0, Counter()
        for d in skills_with_scripts(tmp):
            skill = load_skill(d)
            m = measure_skill(skill, neighbours(skill))
            skills += 1
            for k in totals:
                totals[k] += getattr(m, k)
            if m.unrunnable:
                unrunnable[_cause(m.why)] += 1
            if "-v" in sys.argv:
                print(f"  {d.parent.name}/{d.name}: {m}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"drafts: decidable {_pct('decidable', totals['decidable'], totals['cases'])}; "
          f"satisfied by the skill's script {_pct('satisfied', totals['satisfied'], totals['task_drafts'])}; "
          f"broken copy caught {_pct('caught', totals['caught'], totals['mutants'])}")
    print(f"drafts: of {totals['cases']} drafts of {skills} skills; satisfied over the {totals['task_drafts']} task "
          f"drafts whose script can run here, {totals['unrunnable']} task drafts of {sum(unrunnable.values())} skills "
          f"not runnable here ({', '.join(f'{n} {c}' for c, n in unrunnable.most_common()) or 'none'}); "
          f"caught over {totals['mutants']} broken-copy runs")
    return 0


def _cause(why: str) -> str:
    """The kind of thing a not-runnable script needs (``runnable.not_runnable``'s reasons)."""
    for word, cause in (("package", "need a package"), ("credential", "need a web service"),
                        ("command", "need a command"), ("network", "need the network")):
        if word in why:
            return cause
    return "need a runner"


if __name__ == "__main__":
    raise SystemExit(main())
