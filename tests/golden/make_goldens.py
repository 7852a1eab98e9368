"""Regenerate the golden artifacts under tests/golden/ from a real, offline study.

    .venv/bin/python tests/golden/make_goldens.py

Runs ``aces-bench 'skill.cases=[explicit-1]'`` (reference agent, local backend,
heuristic judge: ~10 s) and ``aces-bench scan`` on one example skill, then keeps one
with_skill/baseline pair of each artifact, trimmed to a few KB (long evidence lists
cut to their first item: every kept value is one the writer produced). The files
that must fail to load (``future_version.*``, ``malformed_*``) are derived from the
valid ones by changing exactly one value, so each tests one refusal.

Only run this when a schema version changes: the goldens of the old version stay
(they are what the migration must keep reading) and the new version gets its own.
The study record's goldens (study_record/) are put together from these by
make_study_record.py. Not collected by pytest.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
from harbor.models.task.config import TaskConfig

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BIN = Path(sys.executable).parent
FUTURE = "9"


def _run(args: list[str], cwd: Path) -> None:
    env = {**os.environ, "HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True, text=True)


def _dump(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _pair_rows(study: Path) -> pd.DataFrame:
    frame = pd.read_parquet(study / "trials.parquet")
    first = sorted(frame["skill"])[0]
    return frame[frame["skill"] == first].sort_values("condition").reset_index(drop=True)


def trials(study: Path, out: Path) -> None:
    rows = _pair_rows(study)
    out.mkdir(parents=True, exist_ok=True)
    rows.to_parquet(out / "trials_v1.parquet", index=False)
    rows.to_csv(out / "trials_v1.csv", index=False)
    future = rows.copy()
    future.loc[1, "schema_version"] = FUTURE
    future.to_csv(out / "future_version.csv", index=False)
    bad = rows.copy()
    bad.loc[0, "status"] = "exploded"
    bad.to_csv(out / "malformed_status.csv", index=False)


def _trim_metric(m: dict) -> dict:
    return {**m, "evidence": m["evidence"][:1], "details": {}}


def grades(study: Path, out: Path) -> None:
    keep = set(_pair_rows(study)["task_id"])
    lines = [json.loads(x) for x in (study / "grades.jsonl").read_text().splitlines() if x.strip()]
    lines = sorted((g for g in lines if g["task_id"] in keep), key=lambda g: g["condition"])
    for g in lines:
        g["metrics"] = {k: _trim_metric(v) for k, v in g["metrics"].items()}
        if g.get("self_correction"):
            g["self_correction"] = _trim_metric(g["self_correction"])
    out.mkdir(parents=True, exist_ok=True)

    def write(name: str, records: list[dict]) -> None:
        (out / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))

    write("grades_v1.jsonl", lines)
    write("future_version.jsonl", [lines[0], {**lines[1], "schema_version": FUTURE}])
    write("malformed_attempt.jsonl", [lines[0], {**lines[1], "attempt": "second"}])


def provenance(study: Path, out: Path) -> None:
    data = json.loads((study / "provenance.json").read_text())
    _dump(out / "provenance_v1.json", data)
    _dump(out / "future_version.json", {**data, "schema_version": FUTURE})
    _dump(out / "malformed_unknown_key.json", {**data, "spec": {**data["spec"], "judgee": data["spec"]["judge"]}})


def tasks_index(study: Path, out: Path) -> None:
    keep = set(_pair_rows(study)["task_id"])
    data = [t for t in json.loads((study / "tasks.json").read_text()) if t["task_id"] in keep]
    for t in data:
        t["path"] = "tasks/" + Path(t["path"]).name  # the run's temp dir means nothing here
    _dump(out / "tasks_v1.json", data)
    # What aces-bench wrote before tasks.json entries carried a version.
    _dump(out / "tasks_unversioned.json", [{k: v for k, v in t.items() if k != "schema_version"} for t in data])
    _dump(out / "future_version.json", [data[0], {**data[1], "schema_version": FUTURE}])


V2_ONLY = ("intervention", "intervention_kind", "intervention_members", "case_source", "decoy_size",
           "decoy_seed", "environment")


def _task_dir(src: Path, dest: Path, aces: dict) -> None:
    # Written by Harbor's own TaskConfig, as the emitter writes task.toml.
    config = TaskConfig.model_validate_toml((src / "task.toml").read_text())
    config = config.model_copy(update={"metadata": {**config.metadata, "aces": aces}})
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "task.toml").write_text(config.model_dump_toml())
    shutil.copy(src / "instruction.md", dest / "instruction.md")


def task_metadata(study: Path, out: Path) -> None:
    with_skill = _pair_rows(study).query("condition == 'with_skill'")["task_id"].iloc[0]
    src = study / "tasks" / with_skill
    aces = tomllib.loads((src / "task.toml").read_text())["metadata"]["aces"]
    _task_dir(src, out / "v2", aces)
    # The first emitter's table: the same keys without those version 2 added.
    _task_dir(src, out / "v1", {**{k: v for k, v in aces.items() if k not in V2_ONLY}, "schema_version": "1"})
    _task_dir(src, out / "future_version", {**aces, "schema_version": FUTURE})
    _task_dir(src, out / "malformed_condition", {**aces, "condition": "with-skill"})
    # A Harbor trial result of this task: aces_bench/grading/external.py finds the task dir through it.
    result = next(p for p in sorted(study.glob("jobs/*/*/result.json"))
                  if json.loads(p.read_text())["task_name"].endswith(with_skill))
    shutil.copy(result, out / "trial_result.json")


def _trim_summary(data: Any) -> Any:
    """Keep at most two rows of every table so the file stays small and still validates."""
    if isinstance(data, dict):
        return {k: (v[:2] if k == "rows" and isinstance(v, list) else _trim_summary(v)) for k, v in data.items()}
    if isinstance(data, list):
        return [_trim_summary(x) for x in data[:2]]
    return data


def summary(study: Path, out: Path) -> None:
    data = _trim_summary(json.loads((study / "report" / "summary.json").read_text()))
    _dump(out / "summary_v1.json", data)
    _dump(out / "future_version.json", {**data, "schema_version": FUTURE})
    _dump(out / "future_stats_version.json", {**data, "stats": {**data["stats"], "schema_version": FUTURE}})


def static_scan(scan: Path, out: Path) -> None:
    corpus = json.loads((scan / "corpus.json").read_text())
    skill_file = sorted((scan / "skills").glob("*.json"))[0]
    skill = json.loads(skill_file.read_text())
    corpus["roots"] = [Path(r).name for r in corpus["roots"]]
    skill["path"] = Path(skill["path"]).name
    _dump(out / "corpus_v1.json", corpus)
    _dump(out / "skill_v1.json", skill)
    _dump(out / "future_version.json", {**skill, "schema_version": FUTURE})
    _dump(out / "malformed_score.json", {**skill, "score": "ninety-seven"})


def local_sandbox(study: Path, out: Path) -> None:
    src = sorted(study.glob("jobs/*/*/local-sandbox.json"))[0]
    data = json.loads(src.read_text())
    _dump(out / "local-sandbox_v1.json", data)
    _dump(out / "future_version.json", {**data, "schema_version": int(FUTURE)})


def judge_cache(out: Path) -> None:
    from aces_bench.judges.cache import JudgeCache, input_sha256
    from aces_bench.judges.prompts import ACCURACY, AccuracyReply

    reply = AccuracyReply.model_validate(_accuracy_reply())
    with tempfile.TemporaryDirectory() as tmp:
        path = JudgeCache(tmp).put(model="openai/gpt-4o-mini", prompt_id="accuracy", prompt_version=ACCURACY.version,
                                   input_hash=input_sha256("system", "user", AccuracyReply), value=reply)
        data = json.loads(path.read_text())
    _dump(out / "entry_v1.json", data)
    _dump(out / "future_version.json", {**data, "schema_version": FUTURE})


def _accuracy_reply() -> dict:
    """A reply as the accuracy judge gives it for a good run (the judged metric's own schema)."""
    yes = {"answer": "yes", "reason": "step 4 runs scripts/reconcile.py on data/march.csv"}
    return {"action_correct": yes, "facts_consistent": yes, "task_addressed": yes,
            "actionable": {"answer": "no", "reason": "the answer gives the total but not the unmatched lines"}}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        study, scan = Path(tmp) / "study", Path(tmp) / "scan"
        _run([str(BIN / "aces-bench"), f"hydra.run.dir={study}", "skill.cases=[explicit-1]"], ROOT)
        _run([str(BIN / "aces-bench"), "scan", "aces_bench/examples/skills/semver-bump", "--out", str(scan),
              "--format", "json", "--no-lint", "--quiet"], ROOT)
        trials(study, HERE / "trials")
        grades(study, HERE / "grades")
        provenance(study, HERE / "provenance")
        tasks_index(study, HERE / "tasks_index")
        task_metadata(study, HERE / "task_metadata")
        summary(study, HERE / "summary")
        static_scan(scan, HERE / "static_scan")
        local_sandbox(study, HERE / "local_sandbox")
        judge_cache(HERE / "judge_cache")
    print(f"goldens written under {HERE}")


if __name__ == "__main__":
    main()
