"""Report SkillsBench's public results registry with the same lift machinery as a study.

The headline (average pass rates without and with skills, and configuration gains) is
computed by ``aces_bench.stats.external.skillsbench_headline`` from the file given;
nothing is hard-coded here.
"""

from __future__ import annotations

from pathlib import Path

from aces_bench.io import write_json, write_text
from aces_bench.reports.figures import FigureInputs, harness_model_cells, metric_lift
from aces_bench.reports.html import environment, render, svg_data_uri
from aces_bench.reports.pages import relative
from aces_bench.reports.summary import build_summary
from aces_bench.stats import (
    StatsSettings,
    build_pairs,
    study_stats,
)
from aces_bench.stats.external import (
    ExternalHeadline,
    load_skillsbench_registry,
    registry_pass_counts,
    skillsbench_headline,
)
from aces_bench.stats.pairing import REWARD

SOURCE = "SkillsBench results registry"


def headline_text(h: ExternalHeadline) -> str:
    """The published-style headline sentence, from computed values."""
    return (f"{h.source}: {h.n_tasks} tasks x {h.n_configs} configurations ({'balanced' if h.balanced else 'unbalanced'}): "
            f"average pass rate {h.mean_without:.1f}% without skills, {h.mean_with:.1f}% with "
            f"({h.lift:+.1f} points); configuration gains {h.min_config_lift:+.1f} to {h.max_config_lift:+.1f} points")


def build_skillsbench_report(registry: Path, out_dir: Path) -> tuple[Path, ExternalHeadline]:
    """Write summary.json, headline.json, figures and index.html for the registry; returns (index, headline)."""
    registry = Path(registry)
    frame = load_skillsbench_registry(registry)
    headline = skillsbench_headline(frame)
    settings = StatsSettings(outcomes=(REWARD,), headline_outcome=REWARD, pass_outcome=REWARD)
    # Per-attempt rewards are not published: pass@k comes from the registry's pass counts,
    # in the one computation that feeds summary.json and the page alike.
    stats = study_stats(frame, settings=settings, counts=registry_pass_counts(frame))
    pairs = build_pairs(frame, outcomes=(REWARD,))
    summary = build_summary(frame, pairs, stats, source=SOURCE, with_pass_rates=False)
    out_dir = Path(out_dir)
    write_json(out_dir / "summary.json", summary)
    write_json(out_dir / "headline.json", headline)
    inputs = FigureInputs(stats, pairs, frame)
    figures = []
    for fn in (metric_lift, harness_model_cells):
        f = fn(inputs, out_dir / "figures")
        figures.append({"name": f.name, "title": f.title, "caption": f.caption, "skipped": f.skipped,
                        "data_uri": svg_data_uri(f.svg) if f.svg else "",
                        "files": [(fmt, relative(p, out_dir)) for fmt, p in sorted(f.paths.items())]})
    html = render(environment(), "external.html.j2", title="SkillsBench registry: Skill Lift", root="", nav_skills=[],
                  has_triage=False, registry=str(registry), h=headline, s=summary, stats=stats,
                  passk=stats.passk_pooled, figures=figures)
    return write_text(out_dir / "index.html", html), headline
