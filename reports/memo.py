"""A report rebuild's computations kept between builds, keyed by everything they read.

Rebuilding the report of a study that has not changed (``aces-bench report`` again, a
new page, a CI gate) recomputed the same statistics from the same trials: scipy's import
and the statistics were most of the command's CPU. ``remember(kind, type, compute,
*inputs)`` returns ``compute()``'s result, or the one stored under the key of

- every source and data file of the installed aces-bench (a changed line of any module
  is another key),
- the Python and library versions the numbers depend on,
- ``kind`` and a digest of ``inputs``: the exact values the computation reads, passed in
  memory (frames cell by cell with their dtypes and index, models and dataclasses field
  by field, floats bit for bit). A value this module cannot digest (an unknown type)
  means no cache for that call, never a guess.

Only computations that read nothing but ``inputs`` (no file, no clock, no environment)
are remembered, and nothing is while code outside aces-bench has changed a registry
(``core.registry.changed_outside``: a plugin, a test's metric). A result is stored as its pydantic JSON, and only when reading it back
gives an equal value that dumps to the same bytes: a hit is the value a fresh
computation would give. Entries live in the figure cache's folder (``render_cache``):
``ACES_FIGURE_CACHE=off`` turns them off too; an unreadable or unwritable cache only
costs the computation.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import gc
import hashlib
import importlib
import importlib.util
import math
import struct
import sys
from collections.abc import Callable
from datetime import date, datetime, timedelta
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path, PurePath
from typing import Any

from pydantic import BaseModel

from aces_bench.core.registry import changed_outside
from aces_bench.reports.render_cache import cache_dir, cached, keep_bytes

# Libraries whose arithmetic or serialisation a remembered result depends on.
DISTRIBUTIONS = ("numpy", "pandas", "pyarrow", "scipy", "statsmodels", "pydantic", "pydantic-core",
                 "matplotlib", "fonttools", "pillow", "jinja2", "harbor")
# The folders installed as aces_bench (setup.py maps reports/, graders/, emitters/ and conf/ under it).
PACKAGES = ("aces_bench", "aces_bench.reports", "aces_bench.graders", "aces_bench.emitters", "aces_bench.conf")
SOURCE_SUFFIXES = {".py", ".yaml", ".yml", ".json", ".j2", ".toml", ".txt", ".csv", ".md", ".html", ".css", ".tex",
                   ".sh"}


class Undigestible(TypeError):
    """An input of a type whose value this module cannot pin down."""


def _package_roots() -> list[Path]:
    roots = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec is not None else []:
            roots.append(Path(location))
    return roots


@functools.cache
def code_digest() -> str:
    """A digest of every source and data file of the installed aces-bench."""
    h = hashlib.sha256()
    for root in _package_roots():
        files = sorted(p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and "__pycache__" not in p.parts
                       and p.is_file())
        for path in files:
            for part in (str(path.relative_to(root)).encode(), path.read_bytes()):
                h.update(len(part).to_bytes(8, "big"))
                h.update(part)
    return h.hexdigest()


@functools.cache
def library_versions() -> str:
    found = [f"python={sys.version}"]
    for dist in DISTRIBUTIONS:
        try:
            found.append(f"{dist}={version(dist)}")
        except PackageNotFoundError:
            found.append(f"{dist}=?")
    return ";".join(found)


class _Digest:
    """Feeds a canonical, typed encoding of a value into a hash."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()

    def tag(self, name: str) -> None:
        self.bytes_(name.encode())

    def bytes_(self, data: bytes) -> None:
        self.h.update(len(data).to_bytes(8, "big"))
        self.h.update(data)

    def feed(self, obj: Any) -> None:  # noqa: C901 (one branch per kind of value)
        kind = type(obj)
        if kind is str:  # the common kinds first, by exact type (a subclass is not its base)
            self.tag("str")
            self.bytes_(obj.encode("utf-8", "surrogatepass"))
        elif obj is None:
            self.tag("None")
        elif kind is float:
            self.tag("float")
            self.bytes_(struct.pack(">d", obj))
        elif kind is bool:
            self.tag("bool:1" if obj else "bool:0")
        elif kind is int:
            self.tag(f"int:{obj}")
        elif kind is dict:
            self.tag(f"dict:{len(obj)}")
            for k, v in obj.items():  # in order: a dict's order can change what is written
                self.feed(k)
                self.feed(v)
        elif _is_model(obj):
            self.tag(f"model:{_qualname(kind)}")
            for name in kind.model_fields:
                self.tag(name)
                self.feed(getattr(obj, name))
            self.feed(obj.__pydantic_extra__)
        else:
            self.other(obj)

    def other(self, obj: Any) -> None:  # noqa: C901
        import numpy as np
        import pandas as pd

        if isinstance(obj, bytes):
            self.tag("bytes")
            self.bytes_(obj)
        elif obj is pd.NA:
            self.tag("NA")
        elif obj is pd.NaT:
            self.tag("NaT")
        elif isinstance(obj, np.generic):
            self.tag(f"np:{obj.dtype.str}")
            self.bytes_(obj.tobytes())
        elif isinstance(obj, pd.DataFrame):
            self.tag(f"frame:{obj.shape[0]}x{obj.shape[1]}")
            self.feed(list(obj.columns))
            self.index(obj.index)
            for i in range(obj.shape[1]):
                self.values(obj.iloc[:, i])
        elif isinstance(obj, pd.Series):
            self.tag("series")
            self.feed(obj.name)
            self.index(obj.index)
            self.values(obj)
        elif isinstance(obj, pd.Index):
            self.index(obj)
        elif isinstance(obj, np.ndarray):
            self.array(obj)
        elif isinstance(obj, (list, tuple)):
            self.tag(f"{type(obj).__name__}:{len(obj)}")
            for item in obj:
                self.feed(item)
        elif isinstance(obj, dict):
            self.tag(f"{_qualname(type(obj))}:{len(obj)}")
            for k, v in obj.items():
                self.feed(k)
                self.feed(v)
        elif isinstance(obj, (set, frozenset)):
            self.tag(f"set:{len(obj)}")
            for part in sorted(_digest_of(item) for item in obj):
                self.bytes_(part)
        elif isinstance(obj, PurePath):
            self.tag(f"path:{obj}")
        elif isinstance(obj, enum.Enum):
            self.tag(f"enum:{_qualname(type(obj))}")
            self.feed(obj.value)
        elif isinstance(obj, (datetime, date, timedelta, pd.Timestamp, pd.Timedelta)):
            self.tag(f"{_qualname(type(obj))}:{obj!r}")
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            self.tag(f"dataclass:{_qualname(type(obj))}")
            for f in dataclasses.fields(obj):
                self.tag(f.name)
                self.feed(getattr(obj, f.name))
        else:
            raise Undigestible(f"cannot digest a {_qualname(type(obj))}")

    def index(self, index) -> None:
        import pandas as pd

        if isinstance(index, pd.RangeIndex):
            self.tag(f"range:{index.start}:{index.stop}:{index.step}")
            self.feed(index.name)
            return
        self.tag(f"index:{type(index).__name__}")
        self.feed(list(index.names))
        self.values(index)

    def values(self, column) -> None:
        """A column's dtype and cells: numeric numpy columns by their bytes, the rest cell by cell."""
        import numpy as np

        self.tag(f"dtype:{column.dtype}")
        if isinstance(column.dtype, np.dtype) and column.dtype.kind in "biufcmM":
            self.array(column.to_numpy())
            return
        cells = column.tolist() if hasattr(column, "tolist") else list(column)
        self.tag(f"cells:{len(cells)}")
        for cell in cells:
            self.feed(cell)

    def array(self, arr) -> None:
        import numpy as np

        self.tag(f"array:{arr.dtype.str}:{arr.shape}")
        if arr.dtype.kind == "O":
            for item in arr.ravel().tolist():
                self.feed(item)
        else:
            self.bytes_(np.ascontiguousarray(arr).tobytes())


def _is_model(obj: Any) -> bool:
    return isinstance(obj, BaseModel)


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _digest_of(obj: Any) -> bytes:
    d = _Digest()
    d.feed(obj)
    return d.h.digest()


def input_digest(*inputs: Any) -> str:
    """The digest of ``inputs`` (raises ``Undigestible`` for a value it cannot pin down)."""
    d = _Digest()
    d.feed(list(inputs))
    return d.h.hexdigest()


def memo_key(kind: str, *inputs: Any) -> str:
    h = hashlib.sha256()
    for part in ("report-memo-v1", code_digest(), library_versions(), kind, input_digest(*inputs)):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part.encode())
    return h.hexdigest()


def preload(*modules: str) -> None:
    """Import the libraries a computation that is not remembered will need, with the cyclic
    collector paused: an import makes only long-lived objects, and the collector's passes
    over them while scipy or matplotlib load found nothing (~0.3 s of CPU, which the report
    command saved when these were imported with it, before they were imported lazily)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        for name in modules:
            importlib.import_module(name)
    finally:
        if collecting:
            gc.enable()


def memo_on() -> bool:
    """Remembered results may be used: the cache is on and no code outside aces-bench changed
    a registry (a plugin's metric or figure is not in ``code_digest``)."""
    return cache_dir() is not None and not changed_outside()


def remember[T](kind: str, result_type: Any, compute: Callable[[], T], *inputs: Any) -> T:
    """``compute()``, or its result stored under ``kind`` and ``inputs`` by an earlier build.

    ``compute`` must read nothing but ``inputs``; ``result_type`` is the pydantic type
    of its result (a model, or e.g. ``list[Model]``).
    """
    from pydantic import TypeAdapter, ValidationError

    if not memo_on():
        return compute()
    try:
        key = memo_key(kind, *inputs)
    except Undigestible:
        return compute()
    adapter = TypeAdapter(result_type)
    stored = cached(key)
    if stored is not None:
        try:
            return adapter.validate_json(stored)
        except (ValidationError, ValueError):
            pass  # an entry of another shape (a damaged file): computed again and replaced
    result = compute()
    data = adapter.dump_json(result)
    try:
        back = adapter.validate_json(data)
    except (ValidationError, ValueError):
        return result
    if _same(back, result) and adapter.dump_json(back) == data:
        keep_bytes(key, data)
    return result


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN (a float field may hold NaN)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False
