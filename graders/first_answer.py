"""The first answer an agent produced, and every later change to it or to its outputs.

AEVAL grades the first answer: the first write of the answer file (or, with no
answer file written, the first final message). Anything the agent changed after it
- the answer rewritten, a workspace output it had produced (or a file the case's
checks read) written again - is self-correction, whatever the final answer scores.

Writes are read from the normalised trace (``graders/tool_calls.py``), for every
harness: editor tools that write whole files (claude-code ``Write``, opencode
``write``, gemini-cli ``write_file``, ``str_replace_based_edit_tool create``), edits
applied to a known text (``Edit``/``MultiEdit``/``edit``/``replace``/``str_replace``,
codex's ``apply_patch``), shell redirects and ``tee`` of text the command shows
(``echo``, ``printf``, heredocs), ``cp``/``mv`` of a file whose text is known,
Python writing the file (``open(...).write``, ``Path(...).write_text``; a literal
text is read, anything else is a write of unknown text) whether run with ``-c``, a
heredoc or as a script the agent wrote, and any program whose output is redirected
into the file. A successful ``cat`` of the file shows its text at that point. A write
whose text cannot be told is still a write: its content is unknown, not guessed.
Deleting a scratch file is cleaning up, not a change to an output; deleting the answer
or a checked file is one.
"""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Literal

from harbor.models.trajectories import Trajectory

from aces_bench.graders.shell import resolve
from aces_bench.graders.tool_calls import Call, TraceView

_EXIT_TRAILER = re.compile(r"\n?\[?(?:exit[ _]code|exit status|process exited with code)\]?:?\s*-?\d+\]?\s*$",
                           re.IGNORECASE)
_PATCH_BLOCK = re.compile(r"\*\*\* (Update|Add|Delete) File: (.+)\n((?:(?!\*\*\* (?:Update|Add|Delete|End)).*\n?)*)")
_EDIT_PAIRS = (("old_string", "new_string"), ("oldString", "newString"), ("old_str", "new_str"))
# A program that writes files: open(..., "w"/"a"/"x"), pathlib and pandas writers, a workbook or document save.
_PY_WRITE = re.compile(r"""\bopen\s*\([^)]*?,\s*(?:mode\s*=\s*)?["'][wax]|\.write_(?:text|bytes)\s*\(|\.to_(?:csv|json|excel|"""
                       r"""parquet|html|markdown)\s*\(|\bjson\.dump\s*\(|\.save\s*\(|\.savefig\s*\(|\bwriteFile(?:Sync)?\s*\(|"""
                       r"""\bshutil\.(?:copy\w*|move)\s*\(""")


@dataclass(frozen=True)
class FileWrite:
    """One write to a file, in trace order; ``content`` None when its text is not in the trace."""

    index: int
    step_id: int
    where: str
    path: str
    content: str | None
    how: str


@dataclass
class AnswerHistory:
    """The first answer and what changed after it."""

    source: Literal["answer_file", "final_message", "none"]
    first: FileWrite | None = None
    first_message: tuple[int, str] | None = None
    answer_writes: list[FileWrite] = field(default_factory=list)
    later_changes: list[FileWrite] = field(default_factory=list)
    contents_at_first: dict[str, str | None] = field(default_factory=dict)
    """Each workspace file's known text right after the first answer (None: written, text unknown)."""
    changed_after_first: set[str] = field(default_factory=set)


def _arguments(traj: Trajectory | None) -> dict[str, dict[str, Any]]:
    """call id -> the tool call's raw arguments, subagents included."""
    out: dict[str, dict[str, Any]] = {}

    def walk(t: Trajectory) -> None:
        for step in t.steps:
            for tc in step.tool_calls or []:
                out[tc.tool_call_id] = tc.arguments or {}
        for sub in t.subagent_trajectories or []:
            walk(sub)

    if traj is not None:
        walk(traj)
    return out


def _apply_edit(args: dict[str, Any], old: str | None) -> str | None:
    """``old`` with an editor tool's replacement(s) applied; None when the result cannot be told."""
    if old is None:
        return None
    edits = args.get("edits") if isinstance(args.get("edits"), list) else [args]
    text = old
    for e in edits:
        if not isinstance(e, dict):
            return None
        pair = next(((e.get(a), e.get(b)) for a, b in _EDIT_PAIRS if isinstance(e.get(a), str)), None)
        if pair is None or not isinstance(pair[1], str):
            return None
        before, after = pair
        if before not in text:
            return None
        every = bool(e.get("replace_all") or e.get("replaceAll"))
        text = text.replace(before, after) if every else text.replace(before, after, 1)
    return text


def _apply_patch(patch: str, known: dict[str, str | None], workdir: str) -> list[tuple[str, str | None, str]]:
    """(path, new text or None, how) of each file a codex-style patch touches."""
    out = []
    for kind, raw_path, body in _PATCH_BLOCK.findall(patch if patch.endswith("\n") else patch + "\n"):
        path = resolve(raw_path.strip(), workdir)
        lines = body.splitlines()
        if kind == "Add":
            out.append((path, "\n".join(ln[1:] for ln in lines if ln.startswith("+")) + "\n", "apply_patch add"))
            continue
        if kind == "Delete":
            out.append((path, None, "apply_patch delete"))
            continue
        text = known.get(path)
        for hunk in re.split(r"^@@.*$", "\n".join(lines), flags=re.MULTILINE):
            hl = [ln for ln in hunk.splitlines() if ln[:1] in (" ", "-", "+")]
            if not hl or text is None:
                continue
            before = "\n".join(ln[1:] for ln in hl if ln[0] in " -")
            after = "\n".join(ln[1:] for ln in hl if ln[0] in " +")
            text = text.replace(before, after, 1) if before in text else None
        out.append((path, text, "apply_patch update"))
    return out


def _python_code(c: Call, texts: dict[str, str]) -> list[str]:
    """The Python (or Node) source a shell call runs: ``-c``/``-e`` code, a heredoc, or a script the agent wrote."""
    out = []
    text = c.text
    try:
        words = shlex.split(text.split("\n", 1)[0], posix=True)
    except ValueError:
        words = text.split()
    for k, w in enumerate(words):
        if w in ("-c", "-e") and k > 0 and re.match(r"(?:python[0-9.]*|node)$", posixpath.basename(words[k - 1])):
            m = re.search(r"\s-[ce]\s+(['\"])(.*?)(?<!\\)\1", text, re.DOTALL)
            out.append(m.group(2) if m else (words[k + 1] if k + 1 < len(words) else ""))
    if "<<" in text and re.search(r"\b(?:python[0-9.]*|node)\b", text.split("\n", 1)[0]):
        out.append(text.split("\n", 1)[1] if "\n" in text else "")
    out += [texts[p] for p in c.execs if p in texts]
    return out


def _literal_python_writes(code: str, workdir: str, cwd: str) -> dict[str, str | None]:
    """path -> text of files a Python program writes with a literal text (None: written, text not literal)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return {}
    handles: dict[str, str] = {}  # variable name -> path opened for writing
    appending: set[str] = set()
    out: dict[str, str | None] = {}

    def path_of(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return resolve(node.value, cwd)
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in ("Path", "PurePath"):
            if node.args:
                return path_of(node.args[0])
        return None

    def opened(node: ast.AST) -> str | None:
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "open" and node.args:
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and mode.value[:1] in "wax":
                p = path_of(node.args[0])
                if p and mode.value[:1] == "a":
                    appending.add(p)  # added to a text this code does not show
                return p
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.withitem):
            p = opened(node.context_expr)
            if p and isinstance(node.optional_vars, ast.Name):
                handles[node.optional_vars.id] = p
                out.setdefault(p, None)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            p = opened(node.value)
            if p:
                handles[node.targets[0].id] = p
                out.setdefault(p, None)
    written: dict[str, list[str | None]] = {}  # path -> each text written to it, in source order
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)),
                   key=lambda n: (n.lineno, n.col_offset))
    for node in calls:
        attr, obj = node.func.attr, node.func.value
        literal = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) and \
            isinstance(node.args[0].value, str) else None
        if attr == "write_text":
            p = path_of(obj)
            if p:
                written[p] = [literal]  # write_text replaces the file
        elif attr == "write":
            p = opened(obj) or (handles.get(obj.id) if isinstance(obj, ast.Name) else None)
            if p:
                written.setdefault(p, []).append(literal)
    for p, pieces in written.items():
        # A loop or a branch around a write makes its count unknowable: only straight-line literals are read.
        straight = all(isinstance(n, (ast.Module, ast.With, ast.Expr, ast.Assign, ast.Call, ast.Attribute,
                                      ast.Name, ast.Constant, ast.withitem, ast.keyword, ast.Load, ast.Store,
                                      ast.alias, ast.Import, ast.ImportFrom))
                       for n in ast.walk(tree))
        known = straight and p not in appending and all(x is not None for x in pieces)
        out[p] = "".join(pieces) if known else None  # type: ignore[arg-type]
    return out


def history(view: TraceView | None, traj: Trajectory | None, *, workdir: str, answer_file: str,
            skills_dir: str, check_files: tuple[str, ...] = ()) -> AnswerHistory:
    """The first answer and the changes after it (see the module docstring). Pure."""
    root = workdir.rstrip("/") or "/"
    answer_path = resolve(answer_file, root)
    watched = {resolve(f, root) for f in check_files}
    if view is None:
        return AnswerHistory(source="none")
    args_of = _arguments(traj)
    known: dict[str, str | None] = {}
    texts: dict[str, str] = {}  # whole texts written (scripts the agent later runs)
    writes: list[FileWrite] = []
    removed: list[FileWrite] = []  # deletions: cleaning up is not correcting an answer, unless it is the answer
    reveals: list[tuple[int, str, str]] = []  # (call index, path, text a cat showed)

    def record(c: Call, path: str, content: str | None, how: str) -> None:
        known[path] = content
        if content is not None:
            texts[path] = content
        writes.append(FileWrite(c.index, c.step_id, c.where, path, content, how))

    for c in view.calls:
        args = args_of.get(c.call_id, {})
        done: set[str] = set()
        for path, text in c.files:
            record(c, path, text, f"{c.tool} (whole text)")
            done.add(path)
        for path, text in c.appends:
            prev = known.get(path, "") if path in known else ""
            record(c, path, None if prev is None else prev + text, f"{c.tool} (append)")
            done.add(path)
        patch = args.get("input") or args.get("patch") or (c.text if "*** Begin Patch" in c.text else "")
        if isinstance(patch, str) and "*** Begin Patch" in patch:
            for path, text, how in _apply_patch(patch, known, root):
                record(c, path, text, how)
                done.add(path)
        for src, dst in c.copies:
            if dst not in done:
                record(c, dst, known.get(src), f"copy of {src}")
                done.add(dst)
        if c.kind == "shell":
            for code in _python_code(c, texts):
                for path, text in _literal_python_writes(code, root, root).items():
                    if path not in done:
                        record(c, path, text, "a Python write")
                        done.add(path)
                base = posixpath.basename(answer_path)
                if answer_path not in done and base in code and _PY_WRITE.search(code):
                    record(c, answer_path, None, "a program that writes it")
                    done.add(answer_path)
        for path in c.writes:
            if path in done:
                continue
            if path in c.removes:
                known.pop(path, None)
                removed.append(FileWrite(c.index, c.step_id, c.where, path, None, f"{c.tool} (removed)"))
                done.add(path)
                continue
            if c.kind == "edit":
                record(c, path, _apply_edit(args, known.get(path)), f"{c.tool} (edit)")
            else:
                record(c, path, None, f"{c.tool} command" if c.kind == "shell" else c.tool)
            done.add(path)
        # A successful cat of one file shows its text at this point.
        if c.kind == "shell" and len(c.reads) == 1 and c.failed is not True and not c.writes \
                and re.match(r"\s*cat\s+\S+\s*$", c.text) and c.reads[0] in known and c.output:
            shown = _EXIT_TRAILER.sub("", c.output).rstrip("\n") + "\n"
            known[c.reads[0]] = shown
            reveals.append((c.index, c.reads[0], shown))

    answer_writes = [w for w in writes if w.path == answer_path]
    hist = AnswerHistory(source="none", answer_writes=answer_writes)
    if answer_writes:
        first = answer_writes[0]
        hist.source, hist.first = "answer_file", first
    else:
        finals = _final_messages(traj)
        if finals:
            hist.source, hist.first_message = "final_message", finals[0]
            hist.later_changes = [FileWrite(-1, sid, f"step {sid}", "(final message)", text, "a later final message")
                                  for sid, text in finals[1:] if text.strip() != finals[0][1].strip()]
        return hist
    cut = first.index
    outputs = {w.path for w in writes if w.index <= cut and _in(w.path, root) and not _in(w.path, skills_dir)}
    outputs |= watched | {answer_path}
    state: dict[str, str | None] = {}
    for w in writes:
        if w.index <= cut:
            state[w.path] = w.content
    for path, text in list(state.items()):
        if text is None:  # a cat after the first answer, before the next write, shows what it was
            nxt = next((w.index for w in writes if w.path == path and w.index > cut), None)
            state[path] = next((t for i, p, t in reveals if p == path and i > cut and (nxt is None or i < nxt)), None)
    hist.contents_at_first = state
    hist.later_changes += [r for r in removed if r.index > cut and r.path in watched | {answer_path}]
    hist.changed_after_first |= {r.path for r in hist.later_changes}
    for w in writes:
        if w.index <= cut or w.path not in outputs:
            continue
        if w.path == answer_path and w.content is not None and first.content is not None \
                and w.content.strip() == (state.get(answer_path) or "").strip():
            continue  # the same text written again changes nothing
        hist.later_changes.append(w)
        hist.changed_after_first.add(w.path)
    return hist


def _in(path: str, folder: str) -> bool:
    folder = folder.rstrip("/")
    return path == folder or path.startswith(folder + "/")


def _final_messages(traj: Trajectory | None) -> list[tuple[int, str]]:
    """(step id, text) of the message that ended each agent turn.

    A turn ends where a user step follows agent steps, and at the end of the
    trajectory; its final message is the last agent message of the turn that made
    no tool call. Commentary between tool calls is not an answer.
    """
    if traj is None:
        return []
    out: list[tuple[int, str]] = []
    last: tuple[int, str] | None = None
    for step in traj.steps:
        if step.is_copied_context:
            continue
        if step.source == "user":
            if last is not None:
                out.append(last)
            last = None
            continue
        if step.source != "agent":
            continue
        text = step.message if isinstance(step.message, str) else \
            "\n".join(p.text for p in (step.message or []) if getattr(p, "text", None))
        last = (step.step_id, text) if not step.tool_calls and text and text.strip() else last
    if last is not None:
        out.append(last)
    return out
