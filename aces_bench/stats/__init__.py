"""Statistics over the tidy trials table: Skill Lift and its uncertainty, pass@k,
routing premium, static-vs-live correlation, significance, design power and a
missingness audit. Pure functions over DataFrames; ``external`` reads SkillsBench's
registry; ``summary.study_stats`` runs everything into one ``StudyStats`` record
(``aces_bench.records.stats``, where the result types live).

scipy and statsmodels are imported inside the functions that call them (about
0.8 s of CPU): a report rebuilt from remembered statistics (``reports/memo.py``) and the
commands that only read these models never import them.

May import (pyproject's layers contract): ``grading`` and every layer below it (``records``,
``graders``, ``run``, ...).
"""

from aces_bench.stats.bootstrap import (
    BootstrapCI,
    bootstrap_table,
    cluster_bootstrap,
    cluster_bootstrap_difference,
)
from aces_bench.stats.correlation import spearman_ci, static_lift_correlation
from aces_bench.stats.external import load_skillsbench_registry, registry_pass_counts, skillsbench_headline
from aces_bench.stats.lift import (
    lift_table,
    pooled_lift,
    summarise_lift,
    within_cell_sd,
)
from aces_bench.stats.pairing import build_pairs, outcome_values
from aces_bench.stats.passk import pass_at_k, pass_counts, passk_table
from aces_bench.stats.routing import routing_premium
from aces_bench.stats.significance import (
    cases_needed,
    design_power,
    holm,
    minimum_detectable_lift,
    per_skill_tests,
    permutation_test,
    sign_test,
)
from aces_bench.stats.summary import study_stats

__all__ = [
    "BootstrapCI", "bootstrap_table", "build_pairs", "cases_needed", "cluster_bootstrap",
    "cluster_bootstrap_difference", "design_power", "holm", "lift_table", "load_skillsbench_registry",
    "minimum_detectable_lift", "outcome_values", "pass_at_k", "pass_counts", "passk_table", "per_skill_tests",
    "permutation_test", "pooled_lift", "registry_pass_counts", "routing_premium", "sign_test", "skillsbench_headline",
    "spearman_ci", "static_lift_correlation", "study_stats", "summarise_lift", "within_cell_sd",
]
