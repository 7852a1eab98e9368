"""A sweep mixing the reference agent with a model-driven harness over two models
(``model.name=openai/a,openai/b``): every member keeps its own folder (no nesting at
the '/'), the reference agent records the model as not applicable and runs once, and
the sweep report covers every member."""

from __future__ import annotations

import json

from support.model_server import ModelServer
from support.studies import needs_bwrap, read_table, run_cli, study_overrides
from support.terminus_policy import terminus_policy

from aces_bench.config.spec import MODEL_NOT_APPLICABLE
from aces_bench.records.trials import read_trials_table


@needs_bwrap
def test_mixed_harness_and_model_sweep_keeps_every_member_and_one_report(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")  # litellm wants some key even for a keyless server
    sweep_dir = tmp_path / "multirun"
    overrides = [o for o in study_overrides(root_parent=tmp_path) if o != "report=false"]
    with ModelServer(terminus_policy, max_requests=40, idle_timeout=300) as server:
        proc = run_cli("-m", "harness=reference,terminus-2", "model=openai-compatible",
                       "model.name=openai/a,openai/b", f"model.base_url={server.base_url}",
                       *overrides, f"hydra.sweep.dir={sweep_dir}", timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "does not support base_url" not in proc.stdout + proc.stderr
    members = sorted(p for p in sweep_dir.iterdir() if (p / "trials.parquet").is_file())
    # reference once (it uses no model), terminus-2 once per model; no folder nests in another.
    assert len(members) == 3, [p.name for p in sweep_dir.iterdir()]
    assert not list(sweep_dir.glob("*/*/trials.parquet"))
    seen = {}
    for member in members:
        table = read_table(member)
        assert set(table["status"]) == {"ok"}, table[["status", "failure_cause"]].to_dict("records")
        seen[(table["harness"].iloc[0], table["model"].iloc[0])] = len(table)
    assert seen == {("reference", MODEL_NOT_APPLICABLE): 2, ("terminus-2", "openai/a"): 2, ("terminus-2", "openai/b"): 2}
    union = read_trials_table(sweep_dir)
    assert len(union) == 6
    # One sweep report over all three members.
    summary = json.loads((sweep_dir / "report" / "summary.json").read_text())
    assert summary["counts"]["n_trials"] == 6
    assert (sweep_dir / "report" / "index.html").is_file()
