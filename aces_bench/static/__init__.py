"""Static tiers of aces-bench: Tier 1 structural score, Tier 2 rubric judge, content
security scan and script lint, with JSON/SARIF/Markdown outputs and figures.

Public API::

    run_scan(paths, ScanOptions(...)) -> (CorpusResult, list[SkillResult])
    write_outputs(out_dir, corpus, results, formats=("json", "sarif", "md"))
    static_vs_live(results, lift, rubric_means=None)   # Spearman + Fisher-z CI
    load_lift(results_dir_or_parquet_or_json) -> {skill: lift}
"""

from aces_bench.static.live import lift_from_trials, load_lift, static_vs_live
from aces_bench.static.models import CorpusResult, Finding, SecurityFinding, SkillResult
from aces_bench.static.pipeline import ScanOptions, run_scan, write_outputs
from aces_bench.static.stats import correlate, fisher_ci

__all__ = [
    "CorpusResult",
    "Finding",
    "ScanOptions",
    "SecurityFinding",
    "SkillResult",
    "correlate",
    "fisher_ci",
    "lift_from_trials",
    "load_lift",
    "run_scan",
    "static_vs_live",
    "write_outputs",
]
