"""One price function and one token estimate, for the preview, the cap and the report.

Every dollar figure aces-bench shows comes from :func:`cost_of`: tokens x the model's
list price in litellm's cost map (cache reads and writes at their own prices where the
map has them). A harness's own cost figure (claude-code's ``total_cost_usd``, its
built-in price table) is kept as evidence but never used, so two harnesses that spent
the same tokens on the same model cost the same.

The estimate before a run assumes ``DEFAULT_INPUT_TOKENS`` + ``DEFAULT_OUTPUT_TOKENS``
per model-driven trial unless the study says otherwise (``study.expected_input_tokens``,
``study.expected_output_tokens``): the design's size, the sweep total, the cap check
and the cost-stop projection all use it.

This module sits below config and agents: it imports nothing of aces-bench.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_INPUT_TOKENS = 50_000
DEFAULT_OUTPUT_TOKENS = 3_000


@dataclass(frozen=True)
class Price:
    """USD per token of one model, as litellm's cost map lists it."""

    model: str  # the cost-map key the price came from
    input: float
    output: float
    cache_read: float | None = None  # None: cached input is billed as input
    cache_write: float | None = None

    def per_million(self) -> str:
        return f"${self.input * 1e6:,.2f} / ${self.output * 1e6:,.2f} per million input / output tokens"


def _keys(name: str) -> list[str]:
    """Cost-map keys to try for a model name: as given, without its provider prefix(es)."""
    keys = [name]
    rest = name
    while "/" in rest:
        rest = rest.split("/", 1)[1]
        keys.append(rest)
    return keys


def _optional(entry: dict, name: str) -> float | None:
    value = entry.get(name)
    return float(value) if value is not None else None


BUNDLED_MAP = "model_prices_and_context_window_backup.json"
_bundled: dict | None = None


def _bundled_map() -> dict | None:
    """litellm's bundled cost map, read as a file without importing litellm (about 3 s of
    CPU, which a cost-cap refusal would otherwise pay first); None when litellm would not
    use it (``LITELLM_LOCAL_MODEL_COST_MAP`` not true: it fetches the current map) or it
    cannot be read."""
    global _bundled
    if os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "").lower() != "true":
        return None
    if _bundled is None:
        found = importlib.util.find_spec("litellm")
        folders = list(found.submodule_search_locations or []) if found is not None else []
        try:
            _bundled = json.loads(Path(folders[0], BUNDLED_MAP).read_bytes()) if folders else {}
        except (OSError, ValueError):
            _bundled = {}
    return _bundled


def _entry_price(key: str, entry) -> Price | None:
    if not isinstance(entry, dict) or entry.get("input_cost_per_token") is None:
        return None
    return Price(key, float(entry["input_cost_per_token"]), float(entry.get("output_cost_per_token") or 0.0),
                 cache_read=_optional(entry, "cache_read_input_token_cost"),
                 cache_write=_optional(entry, "cache_creation_input_token_cost"))


def price_of(model: str | None) -> Price | None:
    """The model's price (``provider/model`` or bare), or None when litellm does not list it.

    Read from ``litellm.model_cost``. Before litellm is imported, an entry of its bundled map
    that lists an input price is read from the file: litellm's loading only fills in prices
    an entry lacks (tests/core/test_pricing_bundled.py holds every such entry to
    ``litellm.model_cost``), and prices registered at run time need litellm imported."""
    if not model:
        return None
    bundled = None if "litellm" in sys.modules else _bundled_map()
    if bundled:
        for key in _keys(model):
            if key not in bundled:
                continue  # nor in litellm's map, which is loaded from this file
            price = _entry_price(key, bundled[key])
            if price is not None:
                return price
            break  # an entry without its input price: litellm's loading may fill it in
        else:
            return None
    import litellm

    for key in _keys(model):
        price = _entry_price(key, litellm.model_cost.get(key))
        if price is not None:
            return price
    return None


@dataclass(frozen=True)
class Usage:
    """Tokens one model used in one trial (or one call).

    ``input_tokens`` counts every prompt token, cached ones included (Harbor's
    convention); ``cache_read_tokens`` and ``cache_write_tokens`` say how many of them
    were read from or written to a prompt cache.
    """

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.model, self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens, self.calls + other.calls)


def usage_cost(usage: Usage, price: Price) -> float:
    """What ``usage`` costs at ``price``."""
    cached = min(usage.input_tokens, usage.cache_read_tokens + usage.cache_write_tokens)
    plain = usage.input_tokens - cached
    read = min(usage.cache_read_tokens, cached)
    write = cached - read
    return (plain * price.input + usage.output_tokens * price.output
            + read * (price.cache_read if price.cache_read is not None else price.input)
            + write * (price.cache_write if price.cache_write is not None else price.input))


@dataclass(frozen=True)
class Cost:
    """The price of a set of usages: dollars for the priced models, the others named."""

    usd: float
    unpriced: tuple[str, ...] = ()
    by_model: dict[str, float] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.unpriced


def cost_of(usages: Iterable[Usage]) -> Cost:
    """The one price function: each model's tokens at its litellm list price."""
    total, unpriced, by_model = 0.0, [], {}
    merged: dict[str, Usage] = {}
    for u in usages:
        merged[u.model] = merged[u.model] + u if u.model in merged else u
    for model, usage in merged.items():
        price = price_of(model)
        if price is None:
            if usage.input_tokens or usage.output_tokens:
                unpriced.append(model)
            continue
        by_model[model] = usage_cost(usage, price)
        total += by_model[model]
    return Cost(total, tuple(sorted(unpriced)), by_model)


def estimate_trial(model: str | None, input_tokens: int = DEFAULT_INPUT_TOKENS,
                   output_tokens: int = DEFAULT_OUTPUT_TOKENS) -> float | None:
    """The estimated cost of one model-driven trial; None when the model has no price."""
    price = price_of(model)
    if price is None:
        return None
    return usage_cost(Usage(model or "", input_tokens, output_tokens), price)
