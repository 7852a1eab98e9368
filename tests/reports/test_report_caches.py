"""What makes a report rebuild cheap never changes what it writes: the figure-rendering
cache, the compiled-template cache and the collector freeze of ``build_report``."""

from __future__ import annotations

import gc

import jinja2
import pytest

from aces_bench.analysis import build_report
from aces_bench.reports import render_cache, style
from aces_bench.reports.latex import environment as latex_environment
from aces_bench.reports.templating import cache_compiled


def _figure(label: str):
    fig = style.new_figure(3.3, 2.0)
    ax = fig.subplots()
    ax.bar([0, 1], [0.2, 0.5], label=label)
    ax.set_title(label)
    return fig


def _save(tmp_path, name: str, label: str) -> dict[str, bytes]:
    with style.paper_style():
        paths = style.save_figure(_figure(label), tmp_path / name, "fig")
    return {fmt: p.read_bytes() for fmt, p in paths.items()}


def test_a_cached_rendering_is_the_bytes_a_fresh_one_would_be(tmp_path, monkeypatch):
    monkeypatch.setenv(render_cache.CACHE_ENV, render_cache.OFF)
    fresh = _save(tmp_path, "fresh", "lift")
    monkeypatch.setenv(render_cache.CACHE_ENV, str(tmp_path / "cache"))
    first = _save(tmp_path, "first", "lift")
    assert len(list((tmp_path / "cache").iterdir())) == 2  # the PDF and the PNG, keyed by the SVG
    second = _save(tmp_path, "second", "lift")
    assert fresh == first == second


def test_a_changed_figure_is_rendered_not_served_from_the_cache(tmp_path, monkeypatch):
    """A figure whose SVG differs in one character must not get the old figure's PDF or PNG."""
    monkeypatch.setenv(render_cache.CACHE_ENV, str(tmp_path / "cache"))
    old = _save(tmp_path, "old", "lift A")
    new = _save(tmp_path, "new", "lift B")
    assert old["pdf"] != new["pdf"] and old["png"] != new["png"]
    assert len(list((tmp_path / "cache").iterdir())) == 4


def test_a_changed_style_is_another_key(tmp_path, monkeypatch):
    """rcParams that touch only the raster (hinting, antialiasing) are not in the SVG; they are in the key."""
    monkeypatch.setenv(render_cache.CACHE_ENV, str(tmp_path / "cache"))
    _save(tmp_path, "plain", "lift")
    import matplotlib

    with matplotlib.rc_context({"text.antialiased": False}):
        _save(tmp_path, "jagged", "lift")
    assert len(list((tmp_path / "cache").iterdir())) == 4


def test_cache_off_or_unwritable_still_writes_every_figure(tmp_path, monkeypatch):
    monkeypatch.setenv(render_cache.CACHE_ENV, render_cache.OFF)
    assert render_cache.cache_dir() is None
    assert set(_save(tmp_path, "off", "lift")) == {"svg", "pdf", "png"}
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setenv(render_cache.CACHE_ENV, str(blocker))
    assert set(_save(tmp_path, "blocked", "lift")) == {"svg", "pdf", "png"}


def test_compiled_templates_are_not_shared_between_environments_of_other_options(tmp_path, monkeypatch):
    """One template file read by the HTML-style and the LaTeX-style environment: each gets
    its own compiled code, and an edited source is compiled again."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # Jinja's cache folder goes under the temp dir
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    (tmp_path / "t").mkdir()
    template = tmp_path / "t" / "page.j2"
    template.write_text("{{ x }}|\\VAR{x}")

    def html() -> jinja2.Environment:
        return cache_compiled(jinja2.Environment(loader=jinja2.FileSystemLoader(tmp_path / "t")))

    def tex() -> jinja2.Environment:
        env = latex_environment()
        env.loader = jinja2.FileSystemLoader(tmp_path / "t")
        return env

    for _ in range(2):  # the second round reads what the first compiled
        assert html().get_template("page.j2").render(x="a") == "a|\\VAR{x}"
        assert tex().get_template("page.j2").render(x="b") == "{{ x }}|b"
    template.write_text("{{ x }}!")
    assert html().get_template("page.j2").render(x="a") == "a!"


def test_the_build_leaves_the_collector_as_it_found_it(study_dir, tmp_path):
    build_report(study_dir, out_dir=tmp_path / "report")
    assert gc.get_freeze_count() == 0
    with pytest.raises(Exception):  # noqa: B017,PT011 (any failure of the build)
        build_report(tmp_path / "no-such-study", out_dir=tmp_path / "bad")
    assert gc.get_freeze_count() == 0


def _tree(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_rebuild_from_remembered_statistics_and_figures_writes_the_same_files(study_dir, tmp_path, monkeypatch):
    """The second build takes the summary and the figure set from the cache (nothing is
    computed or drawn: both are made to fail) and writes what a build without the cache writes."""
    from aces_bench.core import registry

    monkeypatch.setattr(registry, "_changed_outside", False)  # another test of this process may have registered one
    monkeypatch.setenv(render_cache.CACHE_ENV, render_cache.OFF)
    fresh = _tree(build_report(study_dir, out_dir=tmp_path / "fresh").parent)
    monkeypatch.setenv(render_cache.CACHE_ENV, str(tmp_path / "cache"))
    build_report(study_dir, out_dir=tmp_path / "first")
    from aces_bench.analysis import report
    from aces_bench.reports import figures

    def fail(*args, **kwargs):
        raise AssertionError("computed again")

    monkeypatch.setattr(report, "study_summary", fail)
    monkeypatch.setattr(figures, "draw_all", fail)
    second = _tree(build_report(study_dir, out_dir=tmp_path / "second").parent)
    assert second == fresh


def test_a_changed_trial_is_computed_again_not_served_from_the_cache(tmp_path, monkeypatch):
    import pandas as pd
    from support.reports import make_study

    monkeypatch.setenv(render_cache.CACHE_ENV, str(tmp_path / "cache"))
    study = make_study(tmp_path / "study")
    first = (build_report(study).parent / "summary.json").read_text()
    table = next(study.glob("*/trials.parquet"))
    trials = pd.read_parquet(table)
    trials.loc[trials.index[0], "outcome"] = 1.0 - float(trials["outcome"].iloc[0])
    trials.to_parquet(table)
    (table.parent / "trials.csv").unlink(missing_ok=True)
    again = (build_report(study).parent / "summary.json").read_text()
    monkeypatch.setenv(render_cache.CACHE_ENV, render_cache.OFF)
    fresh = (build_report(study, out_dir=tmp_path / "fresh").parent / "summary.json").read_text()
    assert again == fresh != first


def test_inputs_are_digested_by_value_and_type():
    import math

    import numpy as np
    import pandas as pd

    from aces_bench.reports.memo import Undigestible, input_digest

    frame = pd.DataFrame({"a": [1, 2], "b": ["x", None]})
    assert input_digest(frame, {"s": {"b", "a"}}) == input_digest(frame.copy(), {"s": {"a", "b"}})
    assert input_digest(frame) != input_digest(frame.astype({"a": float}))
    cells = pd.DataFrame({"b": pd.Series(["x", None], dtype=object)})
    assert input_digest(cells) != input_digest(cells.assign(b=pd.Series(["x", math.nan], dtype=object)))
    assert input_digest(1) != input_digest(1.0) != input_digest(True)
    assert input_digest(0.0) != input_digest(-0.0)
    assert input_digest(np.float64(0.5)) != input_digest(0.5)
    assert input_digest({"a": 1, "b": 2}) != input_digest({"b": 2, "a": 1})  # order can change what is written
    with pytest.raises(Undigestible):
        input_digest(object())


def test_nothing_is_remembered_while_outside_code_changed_a_registry(tmp_path, monkeypatch):
    from aces_bench.core import registry
    from aces_bench.reports.memo import remember

    monkeypatch.setattr(registry, "_changed_outside", False)
    monkeypatch.setenv(render_cache.CACHE_ENV, str(tmp_path / "cache"))
    calls = []

    def compute() -> list[int]:
        calls.append(1)
        return [1, 2]

    assert remember("test", list[int], compute, "in") == [1, 2]
    assert remember("test", list[int], compute, "in") == [1, 2]
    assert len(calls) == 1
    monkeypatch.setattr(registry, "_changed_outside", True)
    assert remember("test", list[int], compute, "in") == [1, 2]
    assert len(calls) == 2


def test_a_remembered_rebuild_imports_neither_scipy_nor_matplotlib_plotting(study_dir, tmp_path):
    """What makes `aces-bench report` fast the second time: the statistics and the figures
    come from the cache, so their libraries are never imported."""
    import os
    import subprocess
    import sys

    env = {**os.environ, render_cache.CACHE_ENV: str(tmp_path / "cache")}
    code = ("import sys; from aces_bench.analysis import build_report; "
            f"build_report({str(study_dir)!r}, out_dir={str(tmp_path / 'out')!r}); "
            "print(sorted(m for m in ('scipy.stats', 'statsmodels', 'matplotlib.figure', 'matplotlib.pyplot') "
            "if m in sys.modules))")
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            for _ in range(2)]
    assert runs[0].stdout.strip() != "[]"
    assert runs[1].stdout.strip() == "[]", runs[1].stdout
