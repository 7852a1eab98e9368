"""Deliberately broken copies of a skill's script, for measuring how sharp its drafts are (``measure``).

Two kinds, each given as candidates in order of preference; ``measure`` runs them on
the draft's fixture and keeps the first whose run gives something the script's run
does not (``measure.differs``), so the copy it counts is one that is broken where the draft
looks, not one that behaves as the script does on every input the draft gives:

- "off by one": the script's main number off by one. First every count and sum made one
  more at once (``len``, ``sum``, ``.sum()``, ``.count()``, ``.nunique()``,
  ``.shape[0]``), then each of those sites alone, in source order;
- "last step skipped": the last step of ``main()`` (else of the ``__main__`` block, else
  of the module) that does work, dropped. Candidates go from the last statement back;
  returns, imports, docstrings, exits, definitions and statements that only print fixed
  text (``print("Done!")``) are no steps.

A run differs from the script's when its exit status, the files it wrote or its
standard output differ, timestamps aside and log lines aside: a line of standard output
that names a file the run wrote (``Report saved to: out/report.md``) reports where the
work went, it is not the work. Where no candidate's run differs, the first candidate is
kept and counted all the same (a conservative measure: such a copy is an equivalent
mutant that no check on what a run leaves can fail, and it stays in the denominator).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from itertools import islice

MAX_CANDIDATES = 12  # per kind: the copies run before the first is kept (each is a sandboxed run)
OFF_BY_ONE, LAST_STEP = "off by one", "last step skipped"

_COUNTS = frozenset({"len", "sum"})
_COUNT_METHODS = frozenset({"sum", "count", "nunique"})  # pandas/numpy: ``df["x"].sum()``, ``s.count()``


class _Bump(ast.NodeTransformer):
    """Counts and sums made one more: every site, or only the ``only``-th (in the order visited)."""

    def __init__(self, only: int | None = None):
        self.only, self.sites = only, 0

    def _bump(self, node: ast.expr) -> ast.expr:
        self.sites += 1
        if self.only is not None and self.sites - 1 != self.only:
            return node
        return ast.BinOp(left=node, op=ast.Add(), right=ast.Constant(1))

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        func = node.func
        if (isinstance(func, ast.Name) and func.id in _COUNTS) or (
                isinstance(func, ast.Attribute) and func.attr in _COUNT_METHODS):
            return self._bump(node)
        return node

    def visit_Subscript(self, node: ast.Subscript):
        self.generic_visit(node)
        if (isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
                and isinstance(node.slice, ast.Constant) and node.slice.value == 0):
            return self._bump(node)
        return node


def _off_by_one(source: str) -> Iterator[str]:
    """Every count off by one, then each count alone (see the module docstring)."""
    sites = _Bump()
    every = _text(sites.visit(ast.parse(source)))
    if not sites.sites:
        return
    yield every
    if sites.sites > 1:
        yield from (_text(_Bump(i).visit(ast.parse(source))) for i in range(sites.sites))


def _message_only(node: ast.stmt) -> bool:
    """A statement that only prints fixed text (``print("Done!")``, ``print("=" * 60)``): no step of the work.

    Dropping it changes the standard output by a line no correct answer is asked to hold,
    so it is never tried: a run would count that line as a difference.
    """
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    func = node.value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in ("print", "info", "echo", "write") or node.value.keywords and any(
            k.arg not in ("file", "end", "sep", "flush") for k in node.value.keywords):
        return False
    return all(not any(isinstance(x, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.FormattedValue))
                       for x in ast.walk(a)) for a in node.value.args)


def _is_step(node: ast.stmt) -> bool:
    """A statement that may be a step of the work. A definition is none: dropping one the run never
    calls changes nothing, and dropping one it calls breaks the script before any step is skipped."""
    if isinstance(node, (ast.Return, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                         ast.ClassDef)):
        return False
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return False  # a docstring
    return "exit" not in ast.unparse(node)[:40] and not _message_only(node)


def _bodies(tree: ast.Module) -> list[list[ast.stmt]]:
    """Where the script's steps are: ``main()``'s body, the ``__main__`` block's, the module's."""
    bodies = [n.body for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    bodies += [n.body for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)]
    return [*bodies, tree.body]


def _steps_skipped(source: str) -> Iterator[str]:
    """Copies each dropping one step of the first body with two or more, the last step first."""
    for at, body in enumerate(_bodies(ast.parse(source))):
        steps = [i for i, n in enumerate(body) if _is_step(n)]
        if len(steps) >= 2:
            yield from (_text(_dropped(source, at, i)) for i in reversed(steps))
            return


def _dropped(source: str, at: int, index: int) -> ast.Module:
    tree = ast.parse(source)
    del _bodies(tree)[at][index]
    return tree


_SHELL_NO_STEP = re.compile(
    r"""^(?:exit(?:\s+\d+)?|return(?:\s+\d+)?|fi|done|esac|then|else|do|\{|\}|;;|set\s+-\S+"""
    r"""|echo(?:\s+-[neE]+)?(?:\s+(?:"[^"$`]*(?:\$\{?(?:RED|GREEN|YELLOW|BLUE|CYAN|MAGENTA|PURPLE|WHITE|GR[AE]Y|BOLD|DIM|NC|RESET)\}?[^"$`]*)*"|'[^']*'|[^\s"'$`;|&<>()]+))*)\s*;?\s*$""")
"""Lines of a shell script that do no work: an exit, a keyword closing or opening a block, a ``set``
option, an ``echo`` of fixed text (the usual colour variables such as ``${BLUE}`` and ``${NC}`` aside;
an ``echo`` of any other variable reports a value, which is work)."""


def _shell_step_skipped(source: str) -> Iterator[str]:
    """A shell script without one line that does work, from the last back: blank lines, comments,
    exits, block keywords and fixed-text echoes (``_SHELL_NO_STEP``) are no steps, and a copy that
    ``bash -n`` finds broken (a line cut out of an ``if`` header, say) is no candidate: it would
    break the script's syntax, not skip a step."""
    lines = source.rstrip("\n").splitlines()
    steps = [i for i, ln in enumerate(lines)
             if ln.strip() and not ln.strip().startswith("#") and not _SHELL_NO_STEP.match(ln.strip())]
    copies = ("\n".join(ln for j, ln in enumerate(lines) if j != i) + "\n" for i in reversed(steps))
    yield from filter(_parses_as_shell, copies)


def _parses_as_shell(text: str) -> bool:
    """``bash -n``: the copy parses (nothing of it is run)."""
    import subprocess

    try:
        return subprocess.run(["bash", "-n"], input=text.encode(), capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _text(tree: ast.AST) -> str:
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def broken_copies(script: str, source: str) -> dict[str, list[str]]:
    """{kind: candidate copies, in order of preference} for the kinds that apply to the script (at most
    ``MAX_CANDIDATES`` each, none built past it); an empty dict for a script that does not parse or is
    neither Python nor shell."""
    makers: dict[str, Callable[[str], Iterator[str]]] = {}
    if script.endswith(".py"):
        try:
            ast.parse(source)
        except SyntaxError:
            return {}
        makers = {OFF_BY_ONE: _off_by_one, LAST_STEP: _steps_skipped}
    elif script.endswith(".sh"):
        makers = {LAST_STEP: _shell_step_skipped}
    found = {kind: list(islice(make(source), MAX_CANDIDATES)) for kind, make in makers.items()}
    return {kind: copies for kind, copies in found.items() if copies}
