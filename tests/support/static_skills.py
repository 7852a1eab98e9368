"""Build minimal skill folders for the static-tier tests.

``clean_spec()`` describes a skill that violates no Tier 1 rule; each test mutates a
copy and writes it with ``write_skill``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import yaml

FILL_PY = '''#!/usr/bin/env python3
"""Fill a PDF form from a CSV of field values."""
import argparse
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("form")
    parser.add_argument("values")
    parser.add_argument("out")
    args = parser.parse_args()
    if not Path(args.form).is_file():
        raise SystemExit(f"no such form: {args.form}")
    Path(args.out).write_bytes(Path(args.form).read_bytes())


if __name__ == "__main__":
    main()
'''


@dataclass
class SkillSpec:
    dir_name: str = "pdf-form-filler"
    frontmatter: dict | None = field(default_factory=dict)
    raw_frontmatter: str | None = None  # written verbatim between '---' lines when set
    title: str | None = "PDF Form Filler"
    sections: dict[str, str] = field(default_factory=dict)
    files: dict[str, str | bytes] = field(default_factory=dict)
    body_override: str | None = None


def clean_spec() -> SkillSpec:
    return SkillSpec(
        frontmatter={
            "name": "pdf-form-filler",
            "description": "Fills PDF form fields from a CSV of values. Use when a user asks to complete a fillable PDF form; not for scanned PDFs.",
            "version": "1.0.0",
            "author": "Docs Team",
            "tags": ["pdf", "forms"],
            "allowed-tools": "Bash Read",
        },
        sections={
            "When to use": "Use this skill when the user supplies a fillable PDF and the values to enter. Do not use it for scanned PDFs.",
            "Prerequisites": "- Python 3.10 or newer with `pypdf` installed (see `scripts/requirements.txt`).",
            "Instructions": (
                "1. Read [the field reference](references/fields.md) to map CSV columns to field types.\n"
                "2. Fill the form:\n\n"
                "   ```bash\n   python scripts/fill.py form.pdf values.csv out.pdf\n   ```\n\n"
                "3. Verify the output: open `out.pdf`, list its fields and check each value against the CSV."
            ),
            "Example": "Input `form.pdf` with fields `name` and `date`; `values.csv` holds one row. The command writes `out.pdf` with both fields set.",
            "Limitations": "- Scanned PDFs have no form fields; this skill cannot fill them.\n- Signatures are left empty.",
            "Troubleshooting": "- If the script fails with `no such form`, the path is wrong: ask the user for the file.\n- If a field stays empty, its CSV column name does not match; rename the column.",
        },
        files={
            "scripts/fill.py": FILL_PY,
            "scripts/requirements.txt": "pypdf==4.2.0\n",
            "references/fields.md": "# Field types\n\n- Text fields take any string.\n- Checkboxes take `Yes` or `Off`.\n",
        },
    )


def mutate(fn) -> SkillSpec:
    spec = copy.deepcopy(clean_spec())
    result = fn(spec)
    return result if isinstance(result, SkillSpec) else spec


def render(spec: SkillSpec) -> str:
    if spec.body_override is not None:
        body = spec.body_override
    else:
        parts = [f"# {spec.title}\n"] if spec.title else []
        parts += [f"## {h}\n\n{t}\n" for h, t in spec.sections.items()]
        body = "\n".join(parts)
    if spec.raw_frontmatter is not None:
        return f"---\n{spec.raw_frontmatter}\n---\n\n{body}"
    if spec.frontmatter is None:
        return body
    fm = yaml.safe_dump(
        spec.frontmatter, sort_keys=False, width=1000, allow_unicode=True
    ).strip()
    return f"---\n{fm}\n---\n\n{body}"


def write_skill(root: Path, spec: SkillSpec) -> Path:
    d = root / spec.dir_name
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(render(spec), encoding="utf-8")
    for rel, content in spec.files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    return d
