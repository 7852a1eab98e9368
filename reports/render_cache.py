"""The PDF and PNG renderings of a figure, kept between report builds and keyed by its SVG.

Rendering a figure to PDF (font subsetting) and to PNG (300 dpi) costs most of a report
rebuild's CPU; the SVG is cheap and says everything that is drawn (``svg.fonttype =
none``: every text with its font, size and place, every path, colour and hatch). A figure
whose SVG is byte-identical to one rendered before, under the same matplotlib, fontTools,
Pillow and FreeType versions and the same style (``style.RC``, ``style.METADATA``), gets
the PDF and PNG bytes rendered then; anything else is rendered and stored. An entry is
only ever read under its full key, so a stale entry is never used, only left unread.

The cache is ``$ACES_FIGURE_CACHE`` or ``$XDG_CACHE_HOME/aces-bench/figures`` (default
``~/.cache/aces-bench/figures``), never in the study or the user's repository;
``ACES_FIGURE_CACHE=off`` turns it off. The same folder holds a rebuild's remembered
statistics (``memo.py``) and figure sets (``figure_set.py``), under keys of their own. A cache that cannot be read or written is
skipped (the figure is rendered), never an error.
"""

from __future__ import annotations

import functools
import hashlib
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from aces_bench.core.errors import AcesError
from aces_bench.core.io import write_bytes

CACHE_ENV = "ACES_FIGURE_CACHE"
OFF = "off"


def cache_dir() -> Path | None:
    """Where renderings are kept; None when ``ACES_FIGURE_CACHE=off``."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen == OFF:
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "aces-bench" / "figures"


@functools.cache
def _versions() -> str:
    found = []
    for dist in ("matplotlib", "fonttools", "pillow", "numpy"):
        try:
            found.append(f"{dist}={version(dist)}")
        except PackageNotFoundError:
            found.append(f"{dist}=?")
    from matplotlib import ft2font

    return ";".join([*found, f"freetype={ft2font.__freetype_version__}"])


def render_key(svg: bytes, style: str, fmt: str) -> str:
    """The key of ``fmt``'s rendering of the figure whose SVG is ``svg`` drawn with ``style``."""
    h = hashlib.sha256()
    for part in (_versions().encode(), style.encode(), fmt.encode(), svg):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


def cached(key: str) -> bytes | None:
    """The rendering stored under ``key``, or None (not there, cache off or unreadable)."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        return (folder / key).read_bytes()
    except OSError:
        return None


def keep(key: str, path: Path) -> None:
    """Store the rendering written at ``path`` under ``key`` (skipped if the cache cannot be written)."""
    try:
        data = path.read_bytes()
    except OSError:
        return
    keep_bytes(key, data)


def keep_bytes(key: str, data: bytes) -> None:
    """Store ``data`` under ``key`` (skipped if the cache is off or cannot be written)."""
    folder = cache_dir()
    if folder is None:
        return
    try:
        write_bytes(folder / key, data)
    except (OSError, AcesError):  # a cache that cannot be written only costs the next build its time
        return
