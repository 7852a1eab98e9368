"""The Markdown summary of a scan: corpus figures first, per-skill rows last."""

from __future__ import annotations

import re
from typing import Any

from aces_bench.static.models import CorpusResult, SkillResult

MAX_SECURITY_ROWS = 40
# Control characters (C0 but tab, DEL, C1: ANSI escapes start with ESC or CSI) and the
# bidirectional overrides that reorder what a reader sees ("Trojan Source").
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Characters Markdown or HTML would act on in a table cell (code, links, pipes, tags).
_ACTIVE = re.compile(r"([\\`*\[\]|<>&])")
_HTML = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def term_text(value: Any) -> str:
    """``value`` safe to print to a terminal: newlines, control characters (ANSI escapes)
    and bidi overrides shown as escapes, so a skill's name cannot rewrite the screen."""
    text = str(value).replace("\n", "\\n").replace("\r", "\\r")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        text)


def md_text(value: Any) -> str:
    """``value`` as inert Markdown on one line: a skill's file name or message is the
    author's text, so HTML, ANSI escapes, newlines and pipes are shown, never acted on.

    Newlines become ``\\n``, control characters ``\\xNN`` (``\\uNNNN`` for bidi
    overrides), HTML's ``<>&`` entities, and the rest of Markdown's punctuation is
    backslash-escaped.
    """
    text = term_text(str(value).replace("\r\n", "\n").replace("\t", " "))
    return _ACTIVE.sub(lambda m: _HTML.get(m.group(1), "\\" + m.group(1)), text)


def _f(v: Any, pct: bool = False) -> str:
    if v is None:
        return "n/a"
    if pct:
        return f"{100 * v:.1f}%"
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += [
        "| " + " | ".join(md_text(c) for c in row) + " |"
        for row in rows
    ]
    return out + [""]


def _comparison(c: dict[str, Any]) -> list[str]:
    pct_rows = {"share >= 70", "share >= 80"}
    lines = [
        "## Compared with the ACES paper",
        "",
        f"Reported figures: {c.get('reported_source')}.",
        "",
        c["note"],
        "",
    ]
    rows = [
        [
            r["figure"],
            _f(r["ours"], r["figure"] in pct_rows),
            _f(r["reported"], r["figure"] in pct_rows),
            _f(r["difference"], r["figure"] in pct_rows),
        ]
        for r in c["score_rows"]
    ]
    lines += _table(["figure", "this scan", "paper", "difference"], rows)
    if c["violation_rows"]:
        lines += ["Rules the paper names, share of skills violating them:", ""]
        rows = [
            [
                r["reported_label"],
                r["rule_id"] or "(no matching rule)",
                _f(r["ours"], True),
                _f(r["reported"], True),
                _f(r["difference"], True),
            ]
            for r in c["violation_rows"]
        ]
        lines += _table(
            ["paper's wording", "rule", "this scan", "paper", "difference"], rows
        )
    lines += [
        (
            "Frontmatter fields missing. 'any alias' counts a field as declared under the aliases in rules.yaml "
            "(e.g. `metadata.skill-author`, `allowed-tools`); 'top-level key' counts only a key of exactly that name."
        ),
        "",
    ]
    rows = [
        [
            r["field"],
            _f(r["ours_any_alias"], True),
            _f(r["ours_top_level_key"], True),
            _f(r["reported"], True),
        ]
        for r in c["contract_rows"]
    ]
    lines += _table(
        ["field", "missing (any alias)", "missing (top-level key)", "paper"], rows
    )
    return lines


def render(corpus: CorpusResult, results: list[SkillResult], figures: list[str]) -> str:
    s = corpus.stats
    lines = [
        "# aces-bench scan",
        "",
        (
            f"Scanned {', '.join(md_text(r) for r in corpus.roots)}: {corpus.n_skills} skill(s), {corpus.n_errors} could not be scored "
            f"(listed at the end; never counted as 0). Gate {corpus.gate:g}{', strict frontmatter contract' if corpus.strict else ''}."
        ),
        "",
        f"Token counts: {corpus.token_method}.",
        "",
        "## Structural score (Tier 1)",
        "",
    ]
    lines += _table(
        ["n", "mean", "median", "sd", "min", "max", ">= 70", ">= 80", "pass gate"],
        [
            [
                s.n,
                _f(s.mean),
                _f(s.median),
                _f(s.sd),
                _f(s.min),
                _f(s.max),
                _f(s.share_at_or_above_70, True),
                _f(s.share_at_or_above_80, True),
                _f(s.share_passing_gate, True),
            ]
        ],
    )
    lines += _table(
        ["dimension", "mean score"],
        [[d, _f(v)] for d, v in corpus.dimension_means.items()],
    )
    lines += _table(
        ["grade", "skills"], [[g, n] for g, n in corpus.grade_counts.items()]
    )
    for fig in figures:
        lines += [f"![{fig}]({fig})", ""]
    if corpus.comparison:
        lines += _comparison(corpus.comparison)
    lines += ["## Top-10 violated rules", ""]
    lines += _table(
        ["rank", "rule", "title", "dimension", "skills", "share"],
        [
            [i + 1, r.rule_id, r.title, r.dimension, r.skills, _f(r.share, True)]
            for i, r in enumerate(corpus.top_violations)
        ],
    )
    lines += ["## Frontmatter contract: share of skills missing each field", ""]
    lines += _table(
        ["field", "missing (any alias)", "missing (top-level key)"],
        [
            [k, _f(v, True), _f(corpus.contract_missing_top_level_share.get(k), True)]
            for k, v in corpus.contract_missing_share.items()
        ],
    )
    if corpus.by_source:
        lines += ["## By source", ""]
        lines += _table(
            ["source", "n", "mean", "median", "sd", ">= 70", ">= 80"],
            [
                [
                    r["source"],
                    r["n"],
                    _f(r["mean"]),
                    _f(r["median"]),
                    _f(r["sd"]),
                    _f(r["share_at_or_above_70"], True),
                    _f(r["share_at_or_above_80"], True),
                ]
                for r in corpus.by_source
            ],
        )
    lines += _security(corpus, results)
    if corpus.not_evaluable_skills:
        lines += [
            "## Not evaluable",
            "",
            "Checks that could not run because content was absent (script bodies not copied); presence comes from MANIFEST.json.",
            "",
        ]
        example = {
            k: next((r.not_evaluable[k] for r in results if k in r.not_evaluable), "")
            for k in corpus.not_evaluable_skills
        }
        lines += _table(
            ["check", "skills", "example"],
            [[k, n, example[k]] for k, n in corpus.not_evaluable_skills.items()],
        )
    lines += _rubric(corpus.rubric_summary)
    lines += _live(corpus.static_vs_live)
    tools = {t.tool: t for r in results for t in r.tools}
    if tools:
        lines += ["## Script lint (advisory, not scored)", ""]
        lines += _table(
            ["tool", "status", "detail", "findings"],
            [
                [
                    t.tool,
                    t.status,
                    t.detail,
                    sum(1 for r in results for lf in r.lint if lf.tool == t.tool),
                ]
                for t in tools.values()
            ],
        )
    lines += ["## Skills", ""]
    rows = []
    for r in sorted(
        results,
        key=lambda r: (
            r.score is None,
            r.score if r.score is not None else 0,
            r.skill_id,
        ),
    ):
        top = ", ".join(sorted({f.rule_id for f in r.findings})[:8])
        rows.append(
            [
                r.skill_id,
                _f(r.score),
                r.grade or "-",
                "pass" if r.passed_gate else ("error" if r.status != "ok" else "fail"),
                len(r.security),
                top,
            ]
        )
    lines += _table(
        ["skill", "score", "grade", "gate", "security", "rules violated"], rows
    )
    if corpus.errors:
        lines += ["## Skills that could not be scored", ""]
        lines += _table(
            ["skill", "error"], [[e["skill_id"], e["error"]] for e in corpus.errors]
        )
    return "\n".join(lines).rstrip() + "\n"


def _security(corpus: CorpusResult, results: list[SkillResult]) -> list[str]:
    lines = ["## Content security", ""]
    lines += _table(
        ["critical", "high", "medium", "low"],
        [
            [
                corpus.security_counts.get(k, 0)
                for k in ("critical", "high", "medium", "low")
            ]
        ],
    )
    serious = [
        (r, s)
        for r in results
        for s in r.security
        if s.severity in ("critical", "high", "medium")
    ]
    if serious:
        order = {"critical": 0, "high": 1, "medium": 2}
        serious.sort(key=lambda rs: (order[rs[1].severity], rs[0].skill_id))
        rows = [
            [
                s.severity,
                s.pattern_id,
                f"{r.skill_id}/{s.file}:{s.line or ''}",
                s.message + (f" ({s.excerpt})" if s.excerpt else ""),
            ]
            for r, s in serious[:MAX_SECURITY_ROWS]
        ]
        lines += _table(["severity", "pattern", "where", "what"], rows)
        if len(serious) > MAX_SECURITY_ROWS:
            lines += [
                f"... and {len(serious) - MAX_SECURITY_ROWS} more in the JSON and SARIF outputs.",
                "",
            ]
    return lines


def _rubric(summary: dict[str, Any] | None) -> list[str]:
    lines = ["## Rubric (Tier 2)", ""]
    if not summary or summary.get("status") != "ran":
        return lines + [
            f"Did not run: {(summary or {}).get('detail', 'no judge configured')}. No rubric scores are reported.",
            "",
        ]
    lines += _table(
        ["judge", "rated", "errors", "mean (0-100)", ">= gate"],
        [
            [
                j,
                v["n_rated"],
                v["n_errors"],
                _f(v["mean"]),
                _f(v["share_at_or_above_gate"], True),
            ]
            for j, v in summary["judges"].items()
        ],
    )
    for label, why in (summary.get("probe_failed") or {}).items():
        lines += [f"Judge {label} was not used: it failed the probe request ({why[:200]}).", ""]
    sp = summary["judge_spread_points_0_10"]
    lines += [
        f"Judge spread (max - min, 0-10 points): overall {_f(sp['overall_mean'])}, per criterion {_f(sp['criterion_mean'])} over {sp['n_skills']} skill(s) rated by 2+ judges.",
        "",
    ]
    ag = summary.get("judge_agreement")
    if ag:
        kappas = ", ".join(f"{k} {_f(v)}" for k, v in ag["weighted_kappa_quadratic"].items())
        lines += [
            f"Judge agreement: {ag['statistic']}: {_f(ag['icc'])} ({ag['band'] or 'undefined'}) over "
            f"{ag['n_items']} criterion scores; quadratic-weighted kappa {kappas}.",
            "",
        ]
        if ag["low"] or ag["icc"] is None:
            lines += [f"**Warning:** {ag['detail']}.", ""]
    c = summary["structural_vs_rubric"]
    lines += [
        f"Structural vs rubric over {c['n']} skill(s): Spearman {_f(c['spearman'])} (95% CI {c['spearman_ci95']}), Pearson {_f(c['pearson'])} (95% CI {c['pearson_ci95']}). {c['detail']}",
        "",
    ]
    return lines


def _live(block: dict[str, Any] | None) -> list[str]:
    if not block:
        return []
    lines = [
        "## Static scores vs live Skill Lift",
        "",
        f"{len(block['matched'])} skill(s) matched of {block['n_live_skills']} with live results.",
        "",
    ]
    rows = []
    for tier in ("tier1", "tier2"):
        c = block.get(tier)
        if c:
            rows.append(
                [
                    tier,
                    c["n"],
                    _f(c["spearman"]),
                    c["spearman_ci95"] or "n/a",
                    c["detail"] or "",
                ]
            )
    lines += _table(
        ["static tier", "n", "Spearman vs lift", "95% CI (Fisher z)", "note"], rows
    )
    return lines
