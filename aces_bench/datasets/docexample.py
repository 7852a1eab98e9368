"""A JSON input shaped as the skill documents it, when the generic records fixture cannot be.

A script that reads ``fields["form_fields"]`` or iterates a JSON object's ``.items()``
refuses the generic list of sales records. Its skill usually shows the input it
expects: a JSON code block in SKILL.md or a reference file, or an example in the
script's ``--help``. The draft stages that example (an input the skill documents,
never anything the skill printed) and computes its facts itself: how many items the
list under the key the script reads holds. Nothing here runs anything.
"""

from __future__ import annotations

import ast
import json
import re

from aces_bench.datasets.fixtures import Fixture

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1", re.M | re.S)
_FLAT_OBJECT = re.compile(r"\{[^{}]*\}", re.S)
MAX_EXAMPLE = 20_000


def read_shape(source: str) -> tuple[set[str], bool] | None:
    """(string keys the script subscripts on what it loads with ``json.load``, whether it iterates its
    ``.items()``), or None when it loads no JSON into a name."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute) and func.attr in ("load", "loads") and getattr(func.value, "id", "") == "json":
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    if not names:
        return None
    keys, items = set(), False
    for node in ast.walk(tree):
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            keys.add(node.slice.value)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "items"
              and isinstance(node.func.value, ast.Name) and node.func.value.id in names):
            items = True
    return keys, items


def _candidates(texts: list[str]) -> list[object]:
    out = []
    for text in texts:
        blocks = [m.group(2) for m in _FENCE.finditer(text)] + _FLAT_OBJECT.findall(_FENCE.sub("", text))
        for block in blocks:
            if len(block) > MAX_EXAMPLE or not block.lstrip().startswith(("{", "[")):
                continue
            try:
                out.append(json.loads(block))
            except ValueError:
                continue
    return out


def example_fixture(source: str, texts: list[str], name: str = "example.json") -> Fixture | None:
    """The skill's documented JSON example that fits what the script reads, as a fixture, or None.

    It fits when it is an object holding every key the script subscripts (at least
    one), or, for a script that only iterates ``.items()``, an object of plain values.
    ``rows`` is the length of the list under the first key the script reads that holds
    a list (else the object's size): the draft counts it, the skill is never asked.
    """
    shape = read_shape(source)
    if shape is None:
        return None
    keys, items = shape
    if not keys and not items:
        return None
    for example in _candidates(texts):
        if not isinstance(example, dict) or not example:
            continue
        if keys and not keys <= example.keys():
            continue
        if not keys and not all(isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in example.values()):
            continue
        lists = [k for k in sorted(keys) if isinstance(example[k], list)]
        rows = len(example[lists[0]]) if lists else len(example)
        return Fixture(name, json.dumps(example, indent=2) + "\n", rows, None, "input file", unit="items",
                       origin="the skill's documented example", key=lists[0] if lists else None)
    return None
