"""Offline drafts on the public skills with scripts: decidable, satisfied by the skill's script, broken copy caught.

Prints exactly one line (issue 36):
``drafts: decidable X%; satisfied by the skill's script Y%; broken copy caught Z%``
with MISSED after a share below its target (decidable >= 80%, satisfied >= 60%,
caught >= 60%), or a line saying why it was skipped. The scripts are third-party: they
run in the bubblewrap sandbox (network off, a timeout), never on the host.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
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
        totals = dict.fromkeys(("cases", "decidable", "task_drafts", "satisfied", "mutants", "caught"), 0)
        for d in skills_with_scripts(tmp):
            skill = load_skill(d)
            m = measure_skill(skill, neighbours(skill))
            for k in totals:
                totals[k] += getattr(m, k)
            if "-v" in sys.argv:
                print(f"  {d.parent.name}/{d.name}: {m}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"drafts: decidable {_pct('decidable', totals['decidable'], totals['cases'])}; "
          f"satisfied by the skill's script {_pct('satisfied', totals['satisfied'], totals['task_drafts'])}; "
          f"broken copy caught {_pct('caught', totals['caught'], totals['mutants'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
