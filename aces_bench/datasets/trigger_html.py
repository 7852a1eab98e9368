"""The trigger report as an HTML fragment (no page chrome: it is meant to be embedded)."""

from __future__ import annotations

from html import escape

from aces_bench.datasets.trigger import FAILED, ModeResult, TriggerReport


def _pct(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None or value != value:
        return "undefined"
    return f"{value:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _mode(m: ModeResult) -> list[str]:
    t = m.totals()
    cols = m.confusion_columns()
    out = [f"<h4>{escape(m.mode)}: staged {escape(', '.join(m.skills))}</h4>",
           f"<p>{t['runs']} trials: {t['decided']} decided, {t['failed']} failed or timed out before any "
           "activation (counted, not scored).</p>",
           "<table class=\"trigger-queries\"><thead><tr><th>query</th><th>meant for</th><th>runs</th>"
           "<th>failed</th><th>trigger rate [95% Wilson]</th>"
           + "".join(f"<th>{escape(col)}</th>" for col in cols) + "</tr></thead><tbody>"]
    for q in m.queries:
        rate = _pct(q.rate(m.target) if q.decided else None, q.rate_ci(m.target))
        fired = {**q.fired, FAILED: q.failed}
        out.append(f"<tr><td>{escape(q.query)}</td><td>{escape(m.expected_row(q))}</td><td>{q.runs}</td>"
                   f"<td>{q.failed}</td><td>{rate}</td>" + "".join(f"<td>{fired.get(col, 0)}</td>" for col in cols)
                   + "</tr>")
    out.append("</tbody></table>")
    c = m.counts()
    acc, aci, right, decided = m.routing()
    out.append(f"<p>precision {_pct(*m.precision())}; recall {_pct(*m.recall())} "
               f"(tp {c['tp']}, fn {c['fn']}, fp {c['fp']}, tn {c['tn']}); routing: the skill meant fired "
               f"(or none, when none was meant) in {_pct(acc, aci)} of decided runs ({right}/{decided})</p>")
    out.append("<p>Which skill fired, per query (columns above) and per expected skill:</p>")
    out.append("<table class=\"trigger-confusion\"><thead><tr><th>expected \\ fired</th>"
               + "".join(f"<th>{escape(col)}</th>" for col in cols) + "</tr></thead><tbody>")
    for row, counter in m.confusion().items():
        out.append(f"<tr><th>{escape(row)}</th>" + "".join(f"<td>{counter.get(col, 0)}</td>" for col in cols) + "</tr>")
    out.append("</tbody></table>")
    return out


def render_fragment(report: TriggerReport) -> str:
    parts = ["<section class=\"aces-trigger\">",
             f"<h3>Trigger evaluation of {escape(report.skill)}</h3>",
             f"<p>Decided by: {escape(report.router)}; {report.runs} run(s) per query; queries from "
             f"{escape(', '.join(report.sources))}.</p>"]
    parts += [f"<p class=\"note\">{escape(n)}</p>" for n in report.notes]
    for m in report.modes:
        parts += _mode(m)
    if report.candidates:
        parts.append(f"<h4>Description optimisation (train {report.split[0]}, test {report.split[1]} queries, "
                     f"stratified; scored by {escape(report.scored_by or report.router)})</h4>")
        parts.append("<table class=\"trigger-candidates\"><thead><tr><th></th><th>train</th><th>test</th>"
                     "<th>origin</th><th>description</th></tr></thead><tbody>")
        for cand in report.candidates:
            mark = "chosen" if cand is report.chosen else ""
            parts.append(f"<tr><td>{mark}</td><td>{_pct(cand.train, None)}</td><td>{_pct(cand.test, None)}</td>"
                         f"<td>{escape(cand.origin)}</td><td>{escape(cand.description)}</td></tr>")
        parts.append("</tbody></table><p>Chosen on the held-out test queries.</p>")
    parts.append("</section>")
    return "\n".join(parts) + "\n"
