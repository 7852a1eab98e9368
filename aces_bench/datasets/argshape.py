"""The command-line shape a script declares with argparse, read from its source (nothing is run).

A documented command line often leaves out what the script requires (an option
``--docs-dir``, a positional ``topic``) or names an example file the draft does not
have. The draft completes it from the parser the script builds: each
``add_argument`` call gives a name, whether it is required, its choices and a role
guessed from its name, metavar and help (an input file, an input folder, an output
file or folder, a number, a word). Subcommands (``add_subparsers``/``add_parser``)
keep their own arguments. A script with no argparse parser has no shape: its
documented line is used as written.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

_VALUELESS = frozenset({"store_true", "store_false", "store_const", "count", "help", "version", "append_const"})
_OUTPUT = re.compile(r"\b(out|output|outfile|export|save|dest|report)\b|^out_|_out$|output", re.I)
_DIR = re.compile(r"\b(dir|directory|folder)\b|_dir$|^dir_|-dir$", re.I)
_INPUT = re.compile(r"\b(file|path|input|csv|json|tsv|txt|bib|data|scores|table|dataset)\b", re.I)
_WRITES = re.compile(r"\b(output|save|write|export)", re.I)
_SUFFIX_WORD = re.compile(r"\b(csv|tsv|jsonl|json|txt|md|bib)\b", re.I)
_DEFAULT_FILE = re.compile(r"^[\w./-]*\w\.([A-Za-z][A-Za-z0-9]{0,4})$")  # ``plot.png``, ``out/report.json``


@dataclass(frozen=True)
class Arg:
    """One ``add_argument``: its flags (empty for a positional), dest, and what it takes."""

    flags: tuple[str, ...]
    dest: str
    required: bool
    takes_value: bool
    choices: tuple[str, ...] = ()
    number: bool = False
    text: str = ""  # dest, metavar and help, lowercased: what the role is guessed from
    default: str = ""  # a string default (``plot.png``): its suffix is the file type the script writes

    @property
    def positional(self) -> bool:
        return not self.flags

    @property
    def role(self) -> str:
        """``choice``, ``number``, ``output_dir``, ``output``, ``input_dir``, ``input`` or ``word``."""
        if self.choices:
            return "choice"
        if self.number:
            return "number"
        # The dest and flags decide first: a help text may mention a report while describing an input.
        name = " ".join((self.dest, *self.flags)).replace("-", "_")
        if _OUTPUT.search(name):
            return "output_dir" if _DIR.search(name) or _DIR.search(self.text) else "output"
        if re.search(r"\binput|^in_|_in\b", name):
            return "input_dir" if _DIR.search(name) or _DIR.search(self.text) else "input"
        if _WRITES.search(self.text) and not re.search(r"\b(input|read|from|containing)\b", self.text):
            return "output_dir" if _DIR.search(self.text) else "output"
        if _DIR.search(name) or (_DIR.search(self.text) and not _INPUT.search(name)):
            return "input_dir"
        if _INPUT.search(name) or _INPUT.search(self.text):
            return "input"
        return "word"

    @property
    def suffix(self) -> str | None:
        """The file type of the argument's default file name (``.png`` for ``default="plot.png"``), else the
        one its name or help names (``.json`` for "Path to JSON file")."""
        if m := _DEFAULT_FILE.match(self.default):
            return "." + m.group(1).lower()
        m = _SUFFIX_WORD.search(self.text)
        return "." + m.group(1).lower() if m else None


@dataclass
class ArgShape:
    """The main parser's arguments, and each subcommand's."""

    args: list[Arg] = field(default_factory=list)
    subcommands: dict[str, list[Arg]] = field(default_factory=dict)

    def for_words(self, words: list[str]) -> list[Arg]:
        """The arguments that apply to a command line: the main parser's plus its subcommand's, if it names one."""
        sub = next((w for w in words if w in self.subcommands), None)
        return self.args + (self.subcommands[sub] if sub else [])


def _const(node: ast.AST | None):
    return node.value if isinstance(node, ast.Constant) else None


def _arg(call: ast.Call) -> Arg | None:
    names = [_const(a) for a in call.args]
    if not names or not all(isinstance(n, str) for n in names):
        return None
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    flags = tuple(n for n in names if n.startswith("-"))
    dest = _const(kw.get("dest")) or next((n.lstrip("-") for n in names if n.startswith("--")), names[0].lstrip("-"))
    action = _const(kw.get("action"))
    takes_value = action not in _VALUELESS and not (isinstance(kw.get("action"), ast.Name | ast.Attribute))
    nargs = _const(kw.get("nargs"))
    if flags:
        required = _const(kw.get("required")) is True
    else:
        required = nargs not in ("?", "*") and "default" not in kw
    choices = ()
    if isinstance(kw.get("choices"), ast.List | ast.Tuple):
        choices = tuple(str(c) for c in (_const(e) for e in kw["choices"].elts) if c is not None)
    kind = kw.get("type")
    number = isinstance(kind, ast.Name) and kind.id in ("int", "float")
    text = " ".join(str(x) for x in (dest, _const(kw.get("metavar")) or "", _const(kw.get("help")) or "")).lower()
    default = _const(kw.get("default"))
    return Arg(flags, str(dest).replace("-", "_"), required, takes_value, choices, number, text,
               default if isinstance(default, str) else "")


def arg_shape(source: str) -> ArgShape | None:
    """The argparse shape of a script's source, or None when it builds no parser."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    sub_of: dict[str, str] = {}  # parser variable -> subcommand name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "add_parser" and isinstance(_const(next(iter(node.value.args), None)), str)):
            sub_of[node.targets[0].id] = _const(node.value.args[0])
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr == "add_argument"), key=lambda n: (n.lineno, n.col_offset))
    shape = ArgShape()
    for node in calls:  # in source order: positionals are filled in the order they are declared
        arg = _arg(node)
        if arg is None:
            continue
        owner = node.func.value.id if isinstance(node.func.value, ast.Name) else None
        if owner in sub_of:
            shape.subcommands.setdefault(sub_of[owner], []).append(arg)
        else:
            shape.args.append(arg)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_parser"
                and isinstance(_const(next(iter(node.args), None)), str)):
            shape.subcommands.setdefault(_const(node.args[0]), [])
    return shape if calls else None


def _given(words: list[str], args: list[Arg], start: int) -> tuple[set[str], int]:
    """(dests of the options present, count of positional values) in ``words[start:]``."""
    by_flag = {f: a for a in args for f in a.flags}
    present: set[str] = set()
    positionals = 0
    skip = False
    for w in words[start:]:
        if skip:
            skip = False
            continue
        flag = w.split("=", 1)[0]
        if flag in by_flag:
            present.add(by_flag[flag].dest)
            skip = by_flag[flag].takes_value and "=" not in w
        elif not w.startswith("-"):
            positionals += 1
    return present, positionals


def positional_slots(words: list[str], start: int, shape: ArgShape) -> dict[int, Arg]:
    """Which declared positional each positional word of ``words[start:]`` fills: {index of the word: its Arg}.

    Option values and subcommand names fill no slot; positionals are matched in declared order.
    """
    args = shape.for_words(words)
    by_flag = {f: a for a in args for f in a.flags}
    slots = iter([a for a in args if a.positional])
    out: dict[int, Arg] = {}
    skip = False
    for i, w in enumerate(words[start:], start):
        if skip:
            skip = False
        elif (flag := w.split("=", 1)[0]) in by_flag:
            skip = by_flag[flag].takes_value and "=" not in w
        elif not w.startswith("-") and w not in shape.subcommands and (arg := next(slots, None)) is not None:
            out[i] = arg
    return out


def missing(words: list[str], script_at: int, shape: ArgShape) -> list[Arg]:
    """The required arguments a command line leaves out, positionals in declared order."""
    args = shape.for_words(words)
    present, given = _given(words, args, script_at + 1)
    given -= sum(1 for w in words[script_at + 1:] if w in shape.subcommands)
    out = [a for a in args if a.positional and a.required][max(given, 0):]
    return out + [a for a in args if a.flags and a.required and a.dest not in present]


def optional_output(words: list[str], shape: ArgShape) -> Arg | None:
    """An output option the line does not set (a file first, else a folder), for a draft to point under out/."""
    args = shape.for_words(words)
    present, _ = _given(words, args, 0)
    if any(a.dest in present and a.role in ("output", "output_dir") for a in args):
        return None
    free = [a for a in args if a.flags and a.takes_value and a.dest not in present]
    return next((a for a in free if a.role == "output"), None) or next((a for a in free if a.role == "output_dir"), None)


def output_flags(words: list[str], shape: ArgShape | None) -> frozenset[str]:
    """The flags of the line's parser that name an output file or folder."""
    if shape is None:
        return frozenset()
    return frozenset(f for a in shape.for_words(words) if a.role in ("output", "output_dir") for f in a.flags)
