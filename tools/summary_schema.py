"""Write the JSON Schema of summary.json shipped with the package (reports/summary.schema.json).

    .venv/bin/python tools/summary_schema.py          # rewrite it from the ReportSummary model
    .venv/bin/python tools/summary_schema.py --check  # exit 1 when the shipped file has drifted
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aces_bench.records.summary import SCHEMA_FILE, summary_schema

SHIPPED = Path(__file__).resolve().parents[1] / "reports" / SCHEMA_FILE


def text() -> str:
    return json.dumps(summary_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    if "--check" in argv:
        if not SHIPPED.is_file() or SHIPPED.read_text() != text():
            print(f"{SHIPPED} is out of date: run .venv/bin/python tools/summary_schema.py", file=sys.stderr)
            return 1
        return 0
    SHIPPED.write_text(text())
    print(f"wrote {SHIPPED}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
