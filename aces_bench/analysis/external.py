"""Report SkillsBench's public results registry with the same lift machinery as a study.

The headline (average pass rates without and with skills, and configuration gains) is
computed by ``aces_bench.stats.external.skillsbench_headline`` from the file given;
nothing is hard-coded here. ``aces_bench.reports.external`` renders the page.
"""

from __future__ import annotations

from pathlib import Path

from aces_bench.analysis.figure_data import FigureInputs, figure_data
from aces_bench.analysis.summary import build_summary
from aces_bench.core.io import write_json
from aces_bench.core.outcomes import REWARD
from aces_bench.records.stats import ClusteredMean, ExternalHeadline, StatsSettings
from aces_bench.reports.external import render_skillsbench_report
from aces_bench.stats import build_pairs, study_stats
from aces_bench.stats.external import load_skillsbench_registry, registry_pass_counts, skillsbench_headline
from aces_bench.stats.inference import clustered_mean

SOURCE = "SkillsBench results registry"


def headline_intervals(frame, *, level: float = 0.95) -> dict[str, ClusteredMean]:
    """Each condition's mean pass rate (points) with a task-clustered t interval.

    The registry's grid is balanced, so the plain mean over rows is the published nested
    mean; rows of one task share its difficulty, hence the clustering by task."""
    out = {}
    for condition in ("baseline", "with_skill"):
        part = frame.loc[frame["condition"] == condition]
        out[condition] = clustered_mean(part["reward"].to_numpy(float) * 100.0, part["skill"].to_numpy(),
                                        level=level, bounds=(0.0, 100.0), names=("task", "configuration"))
    return out


def build_skillsbench_report(registry: Path, out_dir: Path) -> tuple[Path, ExternalHeadline]:
    """Write summary.json, headline.json, figures and index.html for the registry; returns (index, headline)."""
    registry = Path(registry)
    frame = load_skillsbench_registry(registry)
    headline = skillsbench_headline(frame)
    # McNemar counts each row's pass as the loader decided it (final_pass, the default).
    settings = StatsSettings(outcomes=(REWARD,), headline_outcome=REWARD)
    # Per-attempt rewards are not published: pass@k comes from the registry's pass counts,
    # in the one computation that feeds summary.json and the page alike.
    stats = study_stats(frame, settings=settings, counts=registry_pass_counts(frame))
    pairs = build_pairs(frame, outcomes=(REWARD,))
    summary = build_summary(frame, pairs, stats, source=SOURCE, with_pass_rates=False)
    out_dir = Path(out_dir)
    write_json(out_dir / "summary.json", summary)
    write_json(out_dir / "headline.json", headline)
    cards = headline_intervals(frame, level=settings.level)
    index = render_skillsbench_report(out_dir, registry, summary, headline, cards,
                                       figure_data(FigureInputs(stats, pairs, frame)))
    return index, headline
