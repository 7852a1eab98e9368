"""A small YAML subset reader for configuration files (imported by validate.py).

Supports block mappings and sequences by indentation, ``- key: value`` items, inline
``[a, b]`` lists, comments, quoted strings and the scalars true/false/null/numbers.
Anchors, multi-line strings and flow mappings are refused with a clear message.
"""

import re

_INT = re.compile(r"^[-+]?\d+$")
_FLOAT = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")


class YamlSubsetError(ValueError):
    """The text uses YAML this reader does not support, or is malformed."""


def _strip_comment(line):
    out, quote = [], None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in ("'", '"'):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            break
        out.append(ch)
    return "".join(out).rstrip()


def scalar(text, line_no):
    t = text.strip()
    if t == "" or t in ("~", "null", "Null", "NULL"):
        return None
    if t[0] in "&*!|>{":
        raise YamlSubsetError("line %d: unsupported YAML feature %r (anchors, tags, block strings, flow maps)" % (line_no, t[0]))
    if t[0] in "'\"":
        if len(t) < 2 or t[-1] != t[0]:
            raise YamlSubsetError("line %d: unterminated quoted string" % line_no)
        return t[1:-1]
    if t.startswith("["):
        if not t.endswith("]"):
            raise YamlSubsetError("line %d: unterminated inline list" % line_no)
        inner = t[1:-1].strip()
        return [scalar(part, line_no) for part in inner.split(",")] if inner else []
    if t in ("true", "True", "TRUE", "yes"):
        return True
    if t in ("false", "False", "FALSE", "no"):
        return False
    if _INT.match(t):
        return int(t)
    if _FLOAT.match(t):
        return float(t)
    return t


def loads(text):
    """Parse the supported subset into dicts, lists and scalars."""
    rows = []
    for no, raw in enumerate(text.splitlines(), start=1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise YamlSubsetError("line %d: tab used for indentation; use spaces" % no)
        line = _strip_comment(raw)
        if line.strip() and line.strip() != "---":
            rows.append((no, len(line) - len(line.lstrip()), line.strip()))
    if not rows:
        return None
    value, pos = _block(rows, 0, rows[0][1])
    if pos != len(rows):
        raise YamlSubsetError("line %d: unexpected indentation" % rows[pos][0])
    return value


def _split_key(content, no):
    key, sep, rest = content.partition(":")
    if not sep or (rest and not rest.startswith(" ")):
        raise YamlSubsetError("line %d: expected 'key: value', got %r" % (no, content[:60]))
    key = key.strip().strip("'\"")
    if not key:
        raise YamlSubsetError("line %d: empty key" % no)
    return key, rest.strip()


def _block(rows, pos, indent):
    if rows[pos][2].startswith("- ") or rows[pos][2] == "-":
        return _sequence(rows, pos, indent)
    return _mapping(rows, pos, indent)


def _mapping(rows, pos, indent):
    result = {}
    while pos < len(rows) and rows[pos][1] == indent and not rows[pos][2].startswith("-"):
        no, _, content = rows[pos]
        key, rest = _split_key(content, no)
        if key in result:
            raise YamlSubsetError("line %d: duplicate key %r" % (no, key))
        pos += 1
        if rest:
            result[key] = scalar(rest, no)
        elif pos < len(rows) and (rows[pos][1] > indent or (rows[pos][1] == indent and rows[pos][2].startswith("-"))):
            result[key], pos = _block(rows, pos, rows[pos][1])
        else:
            result[key] = None
    if pos < len(rows) and rows[pos][1] > indent:
        raise YamlSubsetError("line %d: unexpected indentation" % rows[pos][0])
    return result, pos


def _sequence(rows, pos, indent):
    result = []
    while pos < len(rows) and rows[pos][1] == indent and (rows[pos][2].startswith("- ") or rows[pos][2] == "-"):
        no, _, content = rows[pos]
        item = content[1:].strip()
        if not item:
            pos += 1
            value, pos = _block(rows, pos, rows[pos][1]) if pos < len(rows) and rows[pos][1] > indent else (None, pos)
            result.append(value)
        elif re.match(r"^[^'\"\[][^:]*:( |$)", item):
            # "- key: value" opens a mapping whose further keys sit at the item's column.
            child_indent = indent + 2
            rows[pos] = (no, child_indent, item)
            value, pos = _mapping(rows, pos, child_indent)
            result.append(value)
        else:
            result.append(scalar(item, no))
            pos += 1
    return result, pos
