"""Case credentials: names in the task dir, values only from the host at run time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import EvalsError
from aces_bench.emitters import emit_study
from aces_bench.emitters.plan import plan_study
from aces_bench.study.preflight import preflight_trials

SECRET = "wx-7f3a9c1e5b2d4f60"

SKILL_MD = """---
name: weather-token-check
description: Check the weather service token length before calling the API. Use when asked to verify the weather token.
version: 1.0.0
---
# Weather token check

## Usage
```bash
python3 scripts/check.py
```
"""

SCRIPT = """import os
import sys

token = os.environ.get("WEATHER_TOKEN")
if not token:
    sys.exit("error: WEATHER_TOKEN is not set")
print(f"weather token length: {len(token)} characters")
"""


def _skill(root: Path) -> Path:
    skill = root / "weather-token-check"
    (skill / "scripts").mkdir(parents=True)
    (skill / "evals").mkdir()
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "scripts" / "check.py").write_text(SCRIPT)
    (skill / "evals" / "evals.json").write_text(json.dumps({
        "skill_name": "weather-token-check",
        "evals": [{
            "id": "explicit-1", "kind": "explicit",
            "prompt": "Use the weather-token-check skill to verify the weather token length.",
            "expected_script": "scripts/check.py", "credentials": ["WEATHER_TOKEN"],
            "assertions": [{"kind": "number", "value": len(SECRET)}],
        }],
    }))
    return skill


def _spec(tmp_path: Path, skill: Path):
    # A case receives only what the operator lists (issue 21): the test operator lists it.
    return compose_spec(["skill=custom", f"skill.paths=[{skill}]", "report=false", "skill.allow_credentials=[WEATHER_TOKEN]"],
                        output_dir=tmp_path / "out")


def test_task_dir_holds_the_name_never_the_value(tmp_path, monkeypatch):
    monkeypatch.setenv("WEATHER_TOKEN", SECRET)
    spec = _spec(tmp_path, _skill(tmp_path / "skills"))
    result = emit_study(spec, tmp_path / "tasks")
    for task in result.tasks:
        toml = (task.path / "task.toml").read_text()
        assert 'WEATHER_TOKEN = "${WEATHER_TOKEN}"' in toml
        for f in task.path.rglob("*"):
            if f.is_file():
                assert SECRET not in f.read_text(errors="replace"), f


def test_missing_credential_stops_before_any_trial(tmp_path, monkeypatch):
    monkeypatch.delenv("WEATHER_TOKEN", raising=False)
    spec = _spec(tmp_path, _skill(tmp_path / "skills"))
    with pytest.raises(EvalsError) as err:
        preflight_trials(spec, plan_study(spec))
    assert "case explicit-1" in str(err.value)
    assert "WEATHER_TOKEN, which is not set" in str(err.value)


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_the_trial_sees_the_value_and_no_output_records_it(tmp_path, monkeypatch):
    from aces_bench.study.entry import run_study

    monkeypatch.setenv("WEATHER_TOKEN", SECRET)
    spec = _spec(tmp_path, _skill(tmp_path / "skills"))
    out = run_study(spec)
    table = pd.read_parquet(out / "trials.parquet").set_index("condition")
    assert table.loc["with_skill", "status"] == "ok"
    assert table.loc["with_skill", "reward"] == 1.0
    for name in ("tasks.json", "provenance.json", "trials.csv"):
        assert SECRET not in (out / name).read_text()
    for task_toml in (out / "tasks").rglob("task.toml"):
        assert SECRET not in task_toml.read_text()
    leaked = [p for p in (out / "jobs").rglob("*") if p.is_file() and SECRET in p.read_text(errors="replace")]
    assert leaked == [], f"the credential value was written to {leaked}"
