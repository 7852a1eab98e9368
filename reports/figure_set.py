"""The report's figures as a set, remembered between builds: a rebuild of an unchanged
study copies them instead of drawing them.

Drawing the figures (and importing matplotlib's plotting modules to do it) was most of
what remained of a rebuild's CPU once the statistics were remembered (``memo.py``).
Every figure function is a function of ``FigureData`` and the code, so the set's key
is: the code and library versions (``memo.memo_key``), the style each format is saved
with (``style.style_keys``: rcParams in force, metadata, font files) and a digest of the
inputs. Under that key the cache holds a manifest (each figure's name, title, caption,
reason skipped and file names) and each file's bytes by their SHA-256; a hit writes the
same files the drawing would. A miss draws (``figures.draw_all``; PDF and PNG still come
from ``render_cache`` when their SVG was rendered before) and records the set.

The set is drawn, never replayed, while a figure inspector is registered
(``style.INSPECTORS``: a test checks every drawn figure), when the figure registry holds
a figure from outside aces-bench, or when the cache is off (``ACES_FIGURE_CACHE=off``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from aces_bench.core.io import write_bytes
from aces_bench.reports.figure_data import FigureData, FigureOutcome
from aces_bench.reports.memo import Undigestible, memo_key, memo_on, preload
from aces_bench.reports.render_cache import cached, keep_bytes

MANIFEST_VERSION = 1


def _set_key(inp: FigureData) -> str | None:
    """The key of the figure set drawn from ``inp``; None when the set must be drawn."""
    from aces_bench.reports import style

    if style.INSPECTORS or not memo_on():
        return None
    figures = sys.modules.get("aces_bench.reports.figures")
    if figures is not None and any(getattr(fn, "__module__", None) != figures.__name__ for _, fn in figures.FIGURES.items()):
        return None  # a figure registered by other code: not covered by the code digest
    try:
        return memo_key("report figures", MANIFEST_VERSION, style.style_keys(), inp)
    except Undigestible:
        return None


def _blob_key(data: bytes) -> str:
    return hashlib.sha256(b"report figure file\0" + data).hexdigest()


def _replay(key: str, out_dir: Path) -> list[FigureOutcome] | None:
    """The remembered set written into ``out_dir``; None when any part of it is missing."""
    manifest = cached(key)
    if manifest is None:
        return None
    try:
        entry = json.loads(manifest)
        files = {}
        for name, blob in entry["files"].items():
            data = cached(blob)
            if data is None or _blob_key(data) != blob or Path(name).name != name:
                return None
            files[name] = data
        outcomes = [FigureOutcome(o["name"], o["title"], o["caption"],
                                  {fmt: out_dir / name for fmt, name in o["paths"].items()}, o["skipped"])
                    for o in entry["figures"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # a damaged manifest: drawn again and replaced
    if any(p.name not in files for o in outcomes for p in o.paths.values()):
        return None
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        write_bytes(out_dir / name, data)
    return outcomes


def _record(key: str, outcomes: list[FigureOutcome], out_dir: Path) -> None:
    """Keep every file the drawing wrote into ``out_dir`` (a fresh folder) and the manifest."""
    if any(Path(p).parent != out_dir for o in outcomes for p in o.paths.values()):
        return  # a figure written elsewhere cannot be replayed into out_dir
    if any(not p.is_file() for p in out_dir.iterdir()):
        return
    files: dict[str, str] = {}
    for path in sorted(out_dir.iterdir()):
        data = path.read_bytes()
        files[path.name] = _blob_key(data)
        keep_bytes(files[path.name], data)
    figures = [{"name": o.name, "title": o.title, "caption": o.caption, "skipped": o.skipped,
                "paths": {fmt: Path(p).name for fmt, p in o.paths.items()}} for o in outcomes]
    keep_bytes(key, json.dumps({"version": MANIFEST_VERSION, "figures": figures, "files": files}).encode())


def draw_figures(inp: FigureData, out_dir: Path) -> list[FigureOutcome]:
    """Every report figure (``figures.draw_all``), copied from the cache when this set was drawn before."""
    out_dir = Path(out_dir)
    key = _set_key(inp)
    if key is not None and (outcomes := _replay(key, out_dir)) is not None:
        return outcomes
    preload("aces_bench.reports.figures", "matplotlib.figure")
    from aces_bench.reports.figures import draw_all

    outcomes = draw_all(inp, out_dir)
    if key is not None:
        try:
            _record(key, outcomes, out_dir)
        except OSError:
            pass  # a figure file not readable back: the set is drawn again next time
    return outcomes
