"""One paper style for every figure, drawn at print size, and deterministic saving.

Colours are the Okabe-Ito palette (safe for the common colour-vision deficiencies).
Every figure is drawn twice at its print size: at text width (``TEXT``, 6.8 in) and at
single-column width (``COLUMN``, 3.3 in, files ``<name>_column.*``), so its text is
never smaller than 7 pt when included at 100%. Files are PDF, SVG (text kept as text,
``svg.fonttype = none``) and PNG (300 dpi), saved at exactly the drawn size (no tight
bounding box: a column figure is 3.3 in wide). Saving pins everything that would
otherwise vary between runs (the SVG id salt, creation dates, the PNG software tag), so
the same data gives byte-identical SVG and PDF files.

``figure_problems`` checks a drawn figure against the rules a journal would apply
(text at least 7 pt, no legend over an axes or under a title, no twin axes); ``save_figure`` passes
every figure to the ``INSPECTORS`` first (the tests register one).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")  # headless: never open a window, never need a display

from aces_bench.core.io import write_bytes, write_with  # noqa: E402
from aces_bench.reports.render_cache import cached, keep, render_key  # noqa: E402

if TYPE_CHECKING:
    from matplotlib.figure import Figure

OKABE_ITO = {
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "black": "#000000",
}
WITH_SKILL = OKABE_ITO["blue"]
BASELINE = OKABE_ITO["orange"]
LIFT = OKABE_ITO["green"]
NEGATIVE = OKABE_ITO["vermillion"]
SERIES = [OKABE_ITO[k] for k in ("blue", "orange", "green", "vermillion", "purple", "sky_blue", "yellow", "black")]
# Diverging map for lift: vermillion (negative) through white to blue (positive).
DIVERGING = matplotlib.colors.LinearSegmentedColormap.from_list(
    "aces_lift", [OKABE_ITO["vermillion"], "#FFFFFF", OKABE_ITO["blue"]]
)

# Font subsetting for PDF logs every table it prunes at INFO; under Hydra's root INFO
# logging that floods a study's log.
logging.getLogger("fontTools").setLevel(logging.WARNING)

FORMATS = ("svg", "pdf", "png")
SVG_SALT = "aces-bench"

MIN_FONT_PT = 7.0
RC = {
    "svg.hashsalt": SVG_SALT,
    "svg.fonttype": "none",  # text stays text: searchable, editable, the paper's font where it has one
    "pdf.fonttype": 42,
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#DDDDDD",
    "grid.linewidth": 0.6,
    "legend.frameon": False,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "figure.titlesize": 8,
    "figure.dpi": 100,
    "savefig.dpi": 300,
    "savefig.bbox": None,  # the file is exactly the drawn size (3.3 in is 3.3 in)
    "hatch.linewidth": 0.6,
    "figure.constrained_layout.h_pad": 0.03,
    "figure.constrained_layout.w_pad": 0.03,
    "axes.prop_cycle": matplotlib.cycler(color=SERIES),
    # Skill, harness and model names are data, not math: a '$' must not start mathtext.
    "text.parse_math": False,
    "path.simplify": True,
}

METADATA = {
    "svg": {"Date": None, "Creator": "aces-bench"},
    "pdf": {"CreationDate": None, "ModDate": None, "Creator": "aces-bench", "Producer": "aces-bench"},
    "png": {"Software": "aces-bench"},
}


@contextmanager
def paper_style() -> Iterator[None]:
    """Apply the paper rcParams inside the block (and restore the caller's afterwards)."""
    with matplotlib.rc_context(RC):
        yield


@dataclass(frozen=True)
class Size:
    """A print size: the figure's width in inches and the suffix of its files."""

    name: str
    width: float
    suffix: str

    @property
    def column(self) -> bool:
        return self.name == "column"


TEXT = Size("text", 6.8, "")
COLUMN = Size("column", 3.3, "_column")
SIZES = (TEXT, COLUMN)
INSPECTORS: list[Callable[[Figure, str], None]] = []
"""Called with every figure and its file stem before it is saved (tests check the rules)."""


def new_figure(width: float = 6.0, height: float = 3.2) -> Figure:
    """A figure not registered with pyplot's global state (nothing leaks between figures)."""
    # Imported here: the style (rcParams, colours, the cache key) is read by a rebuild
    # whose figures are all remembered (figure_set.py) and so never drawn.
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def draw_sizes(draw: Callable[[Size], Figure], out_dir: Path, stem: str) -> dict[str, Path]:
    """Draw a figure at every print size and save each; paths by format, the column
    width's as ``"<fmt> (column)"``."""
    paths: dict[str, Path] = {}
    for size in SIZES:
        with paper_style():
            fig = draw(size)
            saved = save_figure(fig, out_dir, stem + size.suffix)
        paths.update({(fmt if not size.column else f"{fmt} (column)"): p for fmt, p in saved.items()})
    return paths


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5


def figure_problems(fig: Figure) -> list[str]:
    """What a journal would refuse in ``fig``: text under ``MIN_FONT_PT`` or outside the
    figure, a legend over an axes or over an axes' title or label, twin axes (two axes
    on one spot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # runs the constrained layout, as saving does
    renderer = canvas.get_renderer()
    page = fig.bbox

    def outside(box) -> bool:
        return box.x0 < page.x0 - 1 or box.x1 > page.x1 + 1 or box.y0 < page.y0 - 1 or box.y1 > page.y1 + 1

    # Tick labels exist for ticks outside the view too (never drawn): each axes' tight box
    # (what is drawn of it) is checked instead.
    ticks = {id(t) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis) for t in axis.get_ticklabels(which="both")}
    problems = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip():
            continue
        if t.get_fontsize() < MIN_FONT_PT - 1e-6:
            problems.append(f"text {t.get_text()[:30]!r} at {t.get_fontsize():.1f} pt")
        if id(t) not in ticks and outside(t.get_window_extent(renderer)):
            problems.append(f"text {t.get_text()[:30]!r} outside the figure")
    for ax in fig.axes:
        if ax.get_visible() and outside(ax.get_tightbbox(renderer)):
            problems.append(f"axes {ax.get_label() or ax.get_title(loc='left') or '#'} reaches outside the figure")
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    for leg in legends:
        box = leg.get_window_extent(renderer)
        for ax in axes:
            if _overlaps(box, ax.get_window_extent(renderer)):
                problems.append("legend over an axes")
            # A title or axis label running under a legend beside the axes is unreadable too.
            for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
                if t.get_visible() and t.get_text().strip() and _overlaps(box, t.get_window_extent(renderer)):
                    problems.append(f"text {t.get_text()[:30]!r} under the legend")
    spots = [tuple(round(v, 4) for v in ax.get_position().bounds) for ax in axes]
    if len(spots) != len(set(spots)):
        problems.append("two axes share one spot (twin or dual axes)")
    return problems


def _style_key(fmt: str) -> str:
    """Every setting a rendering to ``fmt`` depends on besides what its SVG shows: the
    rcParams in force while saving (the paper style over the caller's), the metadata, and
    the font files the style's family resolves to (an SVG names the family, not the file
    a PDF embeds)."""
    from matplotlib.font_manager import FontProperties, findfont

    with matplotlib.rc_context(RC):
        params = sorted((k, repr(v)) for k, v in matplotlib.rcParams.items())
        fonts = []
        for weight in ("normal", "bold"):
            file = Path(findfont(FontProperties(weight=weight)))
            stat = file.stat() if file.is_file() else None
            fonts.append((str(file), stat.st_size if stat else None, stat.st_mtime_ns if stat else None))
    return repr((params, sorted(METADATA[fmt].items()), fonts))


def style_keys() -> str:
    """``_style_key`` of every format: what a figure's files depend on besides its drawing code and data."""
    return "\n".join(_style_key(fmt) for fmt in FORMATS)


def save_figure(fig: Figure, out_dir: Path, stem: str) -> dict[str, Path]:
    """Write ``stem.svg``, ``stem.pdf`` and ``stem.png`` atomically; returns them by format.

    Promises: the same figure content gives byte-identical SVG and PDF files. A PDF or
    PNG whose SVG, style and library versions match one rendered before is copied from
    ``render_cache`` instead of rendered again (the same bytes, a fraction of the CPU).
    """
    for inspect in INSPECTORS:
        inspect(fig, stem)
    paths = {}
    svg = b""
    for fmt in FORMATS:  # the SVG first: it is the key of the other formats' cached renderings
        path = Path(out_dir) / f"{stem}.{fmt}"

        def write(tmp: Path, fmt: str = fmt) -> None:
            with matplotlib.rc_context(RC):
                fig.savefig(tmp, format=fmt, metadata=METADATA[fmt])

        if fmt == "svg":
            paths[fmt] = write_with(path, write)
            svg = path.read_bytes()
            continue
        key = render_key(svg, _style_key(fmt), fmt)
        if (rendered := cached(key)) is not None:
            paths[fmt] = write_bytes(path, rendered)
        else:
            paths[fmt] = write_with(path, write)
            keep(key, path)
    if (pyplot := sys.modules.get("matplotlib.pyplot")) is not None:
        pyplot.close(fig)  # a figure made through pyplot (none is when pyplot was never imported)
    return paths
