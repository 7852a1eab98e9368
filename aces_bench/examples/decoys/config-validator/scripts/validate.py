#!/usr/bin/env python3
"""Validate a JSON or YAML configuration file against a JSON Schema (common subset).

Usage: python3 scripts/validate.py CONFIG(.json|.yaml|.yml) SCHEMA.json

Supported keywords: type, enum, const, required, properties, additionalProperties,
items, minItems, maxItems, uniqueItems, minimum, maximum, exclusiveMinimum,
exclusiveMaximum, minLength, maxLength, pattern. Unknown keywords are listed once so a
schema using more of JSON Schema is not silently half-checked.

Standard library only; runs on Python 3.8+.
"""

import json
import re
import sys
from pathlib import Path

# A sibling module: running this file puts scripts/ first on sys.path.
from yaml_subset import YamlSubsetError
from yaml_subset import loads as yaml_loads

EXIT_USAGE = 2
EXIT_INVALID = 1
SUPPORTED = {
    "type", "enum", "const", "required", "properties", "additionalProperties", "items", "minItems",
    "maxItems", "uniqueItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
    "maxLength", "pattern", "$schema", "$id", "title", "description", "default", "examples",
}
TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


class InputError(Exception):
    """A problem with the user's input, reported without a traceback."""


def load_config(path):
    p = Path(path)
    if not p.is_file():
        raise InputError("%s: file not found" % path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("%s: not a UTF-8 text file" % path) from None
    if p.suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError("%s: invalid JSON at line %d column %d: %s" % (path, exc.lineno, exc.colno, exc.msg)) from None
    try:
        return yaml_loads(text)
    except YamlSubsetError as exc:
        raise InputError("%s: %s" % (path, exc)) from None


def load_schema(path):
    p = Path(path)
    if not p.is_file():
        raise InputError("%s: schema file not found" % path)
    try:
        schema = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError("%s: schema is not valid JSON (%s)" % (path, exc)) from None
    if not isinstance(schema, dict):
        raise InputError("%s: schema must be a JSON object" % path)
    return schema


def _type_name(v):
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if TYPES[name](v):
            return name
    return type(v).__name__


def validate(value, schema, path, errors, unsupported):
    """Append (path, message) for every violation of ``schema`` by ``value``."""
    if not isinstance(schema, dict):
        return
    unsupported.update(k for k in schema if k not in SUPPORTED)
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(TYPES.get(n, lambda v: False)(value) for n in names):
            errors.append((path, "expected %s, got %s %r" % (" or ".join(names), _type_name(value), value)))
            return
    if "enum" in schema and value not in schema["enum"]:
        errors.append((path, "%r is not one of %s" % (value, schema["enum"])))
    if "const" in schema and value != schema["const"]:
        errors.append((path, "must be %r" % (schema["const"],)))
    if TYPES["number"](value):
        for key, ok, word in (("minimum", lambda v, b: v >= b, ">="), ("maximum", lambda v, b: v <= b, "<="),
                              ("exclusiveMinimum", lambda v, b: v > b, ">"), ("exclusiveMaximum", lambda v, b: v < b, "<")):
            if key in schema and not ok(value, schema[key]):
                errors.append((path, "%r must be %s %r" % (value, word, schema[key])))
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append((path, "shorter than %d characters" % schema["minLength"]))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append((path, "longer than %d characters" % schema["maxLength"]))
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append((path, "%r does not match pattern %r" % (value, schema["pattern"])))
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append((path, "has %d items, needs at least %d" % (len(value), schema["minItems"])))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append((path, "has %d items, at most %d allowed" % (len(value), schema["maxItems"])))
        if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
            errors.append((path, "items are not unique"))
        for i, item in enumerate(value):
            validate(item, schema.get("items"), "%s[%d]" % (path, i), errors, unsupported)
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(("%s.%s" % (path, key) if path != "$" else key, "required key is missing"))
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            where = "%s.%s" % (path, key) if path != "$" else key
            if key in props:
                validate(item, props[key], where, errors, unsupported)
            elif extra is False:
                hint = _closest(key, props)
                errors.append((where, "unknown key%s" % (" (did you mean %r?)" % hint if hint else "")))
            elif isinstance(extra, dict):
                validate(item, extra, where, errors, unsupported)


def _closest(key, names):
    """A known key that differs from ``key`` by at most two edits, if any."""
    def dist(a, b):
        prev = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            cur = [i]
            for j, cb in enumerate(b, 1):
                cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
            prev = cur
        return prev[-1]
    best = min(names, key=lambda n: dist(key, n), default=None)
    return best if best is not None and dist(key, best) <= 2 else None


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print("usage: validate.py CONFIG(.json|.yaml) SCHEMA.json", file=sys.stderr)
        return EXIT_USAGE
    try:
        config = load_config(argv[1])
        schema = load_schema(argv[2])
    except InputError as exc:
        print("error: %s" % exc, file=sys.stderr)
        return EXIT_USAGE
    errors, unsupported = [], set()
    validate(config, schema, "$", errors, unsupported)
    if unsupported:
        print("note: schema keywords not checked: %s" % ", ".join(sorted(unsupported)))
    if not errors:
        print("VALID: %s conforms to %s" % (argv[1], argv[2]))
        return 0
    print("INVALID: %d problem(s) in %s" % (len(errors), argv[1]))
    for where, message in errors:
        print("  %s: %s" % (where, message))
    return EXIT_INVALID


if __name__ == "__main__":
    sys.exit(main(sys.argv))
