"""``make validate``: run the known-effect suite on the reference agent and on terminus-2
and print what the instrument recovered for each skill whose effect is known.

Exit status 1 when a recovered sign, interval or gate verdict disagrees with the
construction (known_effect.problems), 2 when the suite cannot run here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from support.known_effect import format_table, format_verdicts, problems, verdict_problems
from support.known_effect_harnesses import (
    bwrap_missing,
    run_reference,
    run_reference_verdicts,
    run_terminus,
    run_terminus_verdicts,
)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="make validate", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("outputs/known-effect"), help="where the studies and reports go")
    args = p.parse_args(argv)
    why = bwrap_missing()
    if why:
        print(f"error: {why}; install it with `make sandbox`", file=sys.stderr)
        return 2
    runs = [run_reference(args.out / "reference")]
    run, server = run_terminus(args.out / "terminus-2")
    runs.append(run)
    print(format_table(runs))
    print()
    for r in runs:
        print(f"{r.harness}: `aces-bench report {r.out / 'runs' / 'isolation'} --fail-under-lift 0.05 --per-skill` "
              f"exited {r.gate_rc}")
        for line in r.gate_lines:
            if line.startswith(("FAIL", "gate:")):
                print(f"  {line}")
    # The skills of issue 22, each in its own study, gated as a user would (--fail-under-lift 0.05).
    verdicts = {"reference": run_reference_verdicts(args.out / "reference")}
    verdicts["terminus-2"], verdict_server = run_terminus_verdicts(args.out / "terminus-2")
    print()
    print("\n".join(format_verdicts(label, o) for label, o in verdicts.items()))
    errors = server.errors + verdict_server.errors
    if errors:
        print(f"scripted model server errors: {errors}", file=sys.stderr)
    found = [f"{r.harness}: {p}" for r in runs for p in problems(r)]
    found += [f"{label}: {p}" for label, o in verdicts.items() for p in verdict_problems(o)]
    for line in found:
        print(f"MISMATCH {line}", file=sys.stderr)
    print(f"\nknown effects recovered on {len(runs)} harness(es)" if not found else
          f"\n{len(found)} known effect(s) not recovered", file=sys.stderr if found else sys.stdout)
    return 1 if found or errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
