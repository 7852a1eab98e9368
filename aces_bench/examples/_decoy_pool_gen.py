"""Render the decoy pool (``aces_bench/examples/decoy-pool/``) from its specs.

    python -m aces_bench.examples._decoy_pool_gen [OUT_DIR]

Every skill gets a SKILL.md (frontmatter, When to use, Usage, Prerequisites,
Limitations), one standard-library script under ``scripts/`` and sample inputs under
``samples/``. The committed folder is this generator's output; a test regenerates it
and compares, so the specs stay the single source.

Together with the paper's four decoys (``examples/decoys/``) the pool holds 50
skills, enough for the routing-stress study's largest decoy set.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aces_bench.examples._decoy_pool_files import FILE_SKILLS
from aces_bench.examples._decoy_pool_model import PoolSkill
from aces_bench.examples._decoy_pool_text import TEXT_SKILLS

POOL_DIR = Path(__file__).resolve().parent / "decoy-pool"
POOL_SKILLS: list[PoolSkill] = sorted(TEXT_SKILLS + FILE_SKILLS, key=lambda s: s.name)


def _yaml_str(text: str) -> str:
    # A JSON string is a valid YAML scalar: quote only when plain YAML would misread it.
    return json.dumps(text) if ": " in text or text[:1] in "[{'\"&*!|>%@#" else text


def skill_md(s: PoolSkill) -> str:
    title = s.name.replace("-", " ").capitalize()
    when = "\n".join(f"- {w}." for w in s.when)
    return f"""---
name: {s.name}
description: {_yaml_str(s.description)}
version: 1.0.0
author: aces-bench decoy pool
tags: [{", ".join(s.tags)}]
tools: [bash, python3]
---

# {title}

{s.description}

## When to use
{when}

## Usage
```bash
python3 scripts/{s.script} {s.args}
```

Sample input is in `samples/`: `python3 scripts/{s.script} {" ".join("samples/" + i for i in s.sample_inputs)}`.

## Prerequisites
- Python 3.8 or newer; standard library only. No network access needed.

## Limitations
- {s.limits}
"""


def script_text(s: PoolSkill) -> str:
    return f'''#!/usr/bin/env python3
"""{s.description}

Usage: python3 scripts/{s.script} {s.args}

Standard library only.
"""
{s.code.rstrip()}
'''


def render(s: PoolSkill) -> dict[str, bytes]:
    """Every file of one pool skill, by skill-relative path."""
    files = {"SKILL.md": skill_md(s).encode(), f"scripts/{s.script}": script_text(s).encode()}
    for name, data in s.samples.items():
        files[f"samples/{name}"] = data if isinstance(data, bytes) else data.encode()
    return files


def generate(out_dir: Path = POOL_DIR) -> list[Path]:
    """Write every pool skill under ``out_dir``; returns the skill folders."""
    names = [s.name for s in POOL_SKILLS]
    if len(set(names)) != len(names):
        raise ValueError("two pool skills share a name")
    made = []
    for s in POOL_SKILLS:
        root = Path(out_dir) / s.name
        for rel, data in render(s).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o755 if rel.startswith("scripts/") else 0o644)
        made.append(root)
    return made


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else POOL_DIR
    print(f"wrote {len(generate(target))} skills to {target}")
