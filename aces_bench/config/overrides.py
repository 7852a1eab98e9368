"""Command-line overrides as a user means them.

Hydra's ``+key=value`` appends a key the config does not have and refuses one it has
("Could not append to config"). Every key of a config group's schema exists, so
``+study.reuse_baseline=false`` can only mean "set it": such an override is passed on as
``key=value``. Keys a schema does not declare (``+backend.kwargs.root_parent=...``) keep
their ``+``.
"""

from __future__ import annotations

from collections.abc import Sequence


def _declared(key: str) -> bool:
    from dataclasses import fields

    from aces_bench.config.schema import GROUP_SCHEMAS

    group, _, rest = key.partition(".")
    schema = GROUP_SCHEMAS.get(group)
    return schema is not None and "." not in rest and rest in {f.name for f in fields(schema)}


def normalize(overrides: Sequence[str]) -> list[str]:
    """``overrides`` with ``+group.key=value`` turned into ``group.key=value`` for declared keys."""
    out = []
    for o in overrides:
        if o.startswith("+") and not o.startswith("++") and "=" in o and _declared(o[1:].split("=", 1)[0]):
            o = o[1:]
        out.append(o)
    return out
