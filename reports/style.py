"""One paper style for every figure, and deterministic saving in PDF, SVG and PNG.

Colours are the Okabe-Ito palette (safe for the common colour-vision deficiencies).
Saving pins everything that would otherwise vary between runs: the SVG id salt, the
creation dates in SVG and PDF metadata, and the PNG software tag, so the same data
gives byte-identical SVG (and PDF) files.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: never open a window, never need a display

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from aces_bench.io import write_with  # noqa: E402

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

RC = {
    "svg.hashsalt": SVG_SALT,
    "svg.fonttype": "path",  # glyphs as paths: the SVG looks the same without the font
    "pdf.fonttype": 42,
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#DDDDDD",
    "grid.linewidth": 0.6,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
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


def new_figure(width: float = 6.0, height: float = 3.2) -> Figure:
    """A figure not registered with pyplot's global state (nothing leaks between figures)."""
    return Figure(figsize=(width, height), layout="constrained")


def save_figure(fig: Figure, out_dir: Path, stem: str) -> dict[str, Path]:
    """Write ``stem.svg``, ``stem.pdf`` and ``stem.png`` atomically; returns them by format.

    Promises: the same figure content gives byte-identical SVG and PDF files.
    """
    paths = {}
    for fmt in FORMATS:
        path = Path(out_dir) / f"{stem}.{fmt}"

        def write(tmp: Path, fmt: str = fmt) -> None:
            with matplotlib.rc_context(RC):
                fig.savefig(tmp, format=fmt, metadata=METADATA[fmt])

        paths[fmt] = write_with(path, write)
    plt.close(fig)
    return paths
