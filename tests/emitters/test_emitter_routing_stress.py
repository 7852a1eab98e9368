"""The routing-stress study as a real multirun: decoy sizes 1 and 5, one skill, two
cases, reference agent on the local backend, through the `aces-bench -m` CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SKILL = ROOT / "aces_bench" / "examples" / "skills" / "invoice-reconciler"


@pytest.mark.sandbox
def test_routing_stress_multirun_gives_lift_and_wall_time_per_decoy_size(tmp_path):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed")
    env = {**os.environ, "HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run(
        [sys.executable, "-m", "aces_bench.cli", "-m", "study=routing_stress", "decoys.size=1,5",
         "skill=custom", f"skill.paths=[{SKILL}]", "skill.cases=[explicit-1,negative-1]", "report=false",
         f"hydra.sweep.dir={tmp_path}", "hydra.sweep.subdir=decoys-${decoys.size}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for size in (1, 5):
        table = pd.read_parquet(tmp_path / f"decoys-{size}" / "trials.parquet")
        assert len(table) == 4 and set(table["status"]) == {"ok"}
        assert set(table["decoy_set"]) == {f"pool-n{size}-s0"}
        visible = table.groupby("condition")["n_visible_skills"].unique().to_dict()
        assert list(visible["with_skill"]) == [size + 1] and list(visible["baseline"]) == [size]
        assert table["wall_sec"].notna().all() and (table["wall_sec"] > 0).all()
        # Lift on the positive case: the skill is found among the decoys and helps.
        pos = table[~table["negative_control"]].set_index("condition")["reward"]
        assert pos["with_skill"] == 1.0 and pos["baseline"] < 1.0
