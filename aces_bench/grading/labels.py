"""Who produced a study's numbers, as its records name them, read from the run spec.

Grading gives every graded trial these labels (``records.trials.LABEL_FIELDS``), so the
records carry them as data and never read a spec; the study's provenance names the
judge with the same ``judge_label``.
"""

from __future__ import annotations

from aces_bench.config.spec import RunSpec


def judge_label(spec: RunSpec) -> str:
    j = spec.judge
    if j.models:
        names = ["heuristic" if m.model == "heuristic" else f"litellm:{m.model}" for m in j.models]
        return f"panel of {len(names)} ({j.aggregate}): {', '.join(names)}"
    return "heuristic (offline, deterministic)" if j.kind == "heuristic" else f"litellm:{j.model}"


def spec_labels(spec: RunSpec) -> dict[str, str | None]:
    """The labels of every trial graded under ``spec`` (``records.trials.LABEL_FIELDS``)."""
    return {"run_id": spec.output_dir.name, "harness": spec.harness.name, "model": spec.model.display,
            "agent_label": spec.harness.display, "judge_label": judge_label(spec), "backend": spec.backend.display}
