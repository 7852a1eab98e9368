"""Static tiers of aces-bench: Tier 1 structural score, Tier 2 rubric judge, content
security scan and script lint, with JSON/SARIF/Markdown outputs and figures.

Public API::

    run_scan(paths, ScanOptions(...)) -> (CorpusResult, list[SkillResult])
    write_outputs(out_dir, corpus, results, formats=("json", "sarif", "md"))
    static_vs_live(results, lift, rubric_means=None)   # Spearman + Fisher-z CI
    load_lift(results_dir_or_parquet_or_json) -> {skill: lift}

May import (pyproject's layers contract): ``stats`` and every layer below it.
"""

from importlib import import_module
from typing import Any

# Names resolve on first use: `aces-bench scan` must not pay for pandas and scipy
# (static-vs-live, correlations) before it needs them.
_EXPORTS = {
    "lift_from_trials": "aces_bench.static.live",
    "load_lift": "aces_bench.static.live",
    "static_vs_live": "aces_bench.static.live",
    "CorpusResult": "aces_bench.static.models",
    "Finding": "aces_bench.static.models",
    "SecurityFinding": "aces_bench.static.models",
    "SkillResult": "aces_bench.static.models",
    "ScanOptions": "aces_bench.static.pipeline",
    "run_scan": "aces_bench.static.pipeline",
    "write_outputs": "aces_bench.static.pipeline",
    "correlate": "aces_bench.static.stats",
    "fisher_ci": "aces_bench.static.stats",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'aces_bench.static' has no attribute {name!r}")


__all__ = sorted(_EXPORTS)
