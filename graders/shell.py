"""What a shell command does to files, read statically from its text.

Graders need to know which paths a command read, wrote, listed or executed, and
whether it was fishing for ``--help`` or installing packages. This is a fast,
regex-based reading of the command (no shell is run): heredoc bodies are set
aside, the rest is split into simple commands, and each simple command is read
by what its program conventionally does. It is deliberately conservative: an
argument it cannot place is ignored rather than guessed.

The working directory is threaded through: ``cd x && cat SKILL.md`` reads
``x/SKILL.md``, and the cwd after the command is returned so a caller can carry
it into the next call of a persistent shell.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

# Words and operators. Quoted strings and escapes are single pieces; adjacent
# pieces without whitespace between them form one word (``a"b c"`` -> ``ab c``).
_TOKEN = re.compile(
    r"""'[^']*'?|"(?:\\.|[^"\\])*"?|\\.|&&|\|\||;;|[0-9]?>>|[0-9]?>&[0-9-]?|&>>?|[0-9]?>|<<<|<<-?|<|[;|&()]|[^\s'"\\;|&<>()]+""",
    re.DOTALL,
)
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_OPERATOR = re.compile(r"&&|\|\||;;|[0-9]?>>|[0-9]?>&[0-9-]?|&>>?|[0-9]?>|<<<|<<-?|<|[;|&()]")
_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", ";;"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

_WRAPPERS = {"sudo", "env", "nohup", "time", "nice", "exec", "command", "builtin", "stdbuf", "xargs", "doas"}
_READERS = {
    "cat", "head", "tail", "less", "more", "nl", "bat", "batcat", "tac", "wc", "sort", "uniq", "cut",
    "diff", "cmp", "md5sum", "sha256sum", "sha1sum", "strings", "od", "xxd", "hexdump", "view",
    "vim", "vi", "nano", "emacs", "column", "iconv", "base64",
}
# Programs whose first positional argument is a pattern or program, not a file.
_PATTERN_FIRST = {"grep", "egrep", "fgrep", "rg", "ag", "awk", "gawk", "jq", "sed", "yq"}
_LISTERS = {"ls", "find", "tree", "du", "stat", "file", "realpath", "readlink", "test", "["}
_COPIERS = {"cp", "mv", "install", "rsync", "ln"}
_MODIFIERS = {"touch", "truncate", "rm", "rmdir", "mkdir", "unlink", "shred"}
_REMOVERS = {"rm", "rmdir", "unlink"}
_PERMS = {"chmod", "chown", "chgrp"}
_INTERPRETERS = re.compile(
    r"^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|ruby|perl|php|Rscript|bash|sh|zsh|dash|ksh|"
    r"tsx|ts-node|julia|lua|osascript)$"
)
_RUNNERS = {"uv": "run", "poetry": "run", "pipenv": "run", "npx": None, "pnpm": "exec", "conda": "run"}
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
_HELP_PROGRAMS = {"man", "info", "help", "pydoc", "pydoc3", "tldr"}
_INSTALL = re.compile(
    r"^(?:(?:python[0-9.]*\s+-m\s+)?pip[0-9.]*\s+install|pipx\s+install|uv\s+(?:pip\s+install|add|tool\s+install)|"
    r"(?:conda|mamba|micromamba)\s+install|apt(?:-get)?\s+(?:-\S+\s+)*install|(?:yum|dnf|zypper)\s+install|"
    r"apk\s+add|brew\s+install|(?:npm|pnpm)\s+(?:install|i|add)|yarn\s+(?:global\s+)?add|bun\s+(?:add|install)|"
    r"cargo\s+install|gem\s+install|go\s+(?:install|get)|poetry\s+add)\b"
)
_OPTION_WITH_VALUE = {
    "head": {"-n", "-c"}, "tail": {"-n", "-c"}, "grep": {"-e", "-f", "-A", "-B", "-C", "-m"},
    "rg": {"-e", "-g", "-A", "-B", "-C", "-m", "-t"}, "sed": {"-e", "-f"}, "awk": {"-F", "-v", "-f"},
    "find": set(), "ls": set(), "cut": {"-d", "-f", "-c"}, "sort": {"-k", "-t"},
    "python": {"-m", "-c", "-W", "-X"}, "node": {"-e", "-r"}, "bash": {"-c", "-o"}, "sh": {"-c", "-o"},
}
_NULL_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"}


_SYS_PATH = re.compile(r"""sys\.path\.(?:append|insert)\(\s*(?:-?\d+\s*,\s*)?(?:r|f)?(['"])([^'"]+)\1\s*\)""")
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import\b|import[ \t]+([\w. ,]+?)(?:[ \t]+as[ \t]+\w+)?[ \t]*(?:#.*)?$)",
                     re.MULTILINE)
_IMPORT_INLINE = re.compile(r"(?:^|;)\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))")
_PYTHON = re.compile(r"^(?:python[0-9.]*|pypy[0-9.]*)$")


@dataclass(frozen=True, slots=True)
class ShellFacts:
    """Paths a command touches, by operation, with the cwd it leaves behind.

    ``imports``: the files a Python program run by the command would import its
    modules from, one candidate per search directory (``sys.path.append/insert``
    in the code, ``PYTHONPATH``, the working directory for ``-c``/``-m``/stdin, the
    script's own folder); which of them exist is the grader's business.
    ``copies``: (source, destination) of ``cp``/``mv``/``install``/``rsync`` and
    ``cat SRC > DST``. ``written``: (path, text) of files written whole with text the
    command shows (a heredoc, ``echo``/``printf`` redirected or piped into ``tee``).
    ``appended``: the same for ``>>`` and ``tee -a``. ``removed``: paths ``rm``/``unlink``
    deleted (also in ``writes``).
    """

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    lists: tuple[str, ...] = ()
    execs: tuple[str, ...] = ()
    programs: tuple[str, ...] = ()
    flags: frozenset[str] = field(default_factory=frozenset)
    cwd: str = "/"
    imports: tuple[str, ...] = ()
    copies: tuple[tuple[str, str], ...] = ()
    written: tuple[tuple[str, str], ...] = ()
    appended: tuple[tuple[str, str], ...] = ()
    removed: tuple[str, ...] = ()


_PRINTF_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "\"": "\"", "'": "'", "r": "\r", "a": "\a", "0": "\0"}


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _PRINTF_ESCAPES.get(m.group(1), "\\" + m.group(1)), text)


def echoed(words: list[str], stdin: str | None = None) -> str | None:
    """The text ``echo``/``printf``/``cat`` (of a heredoc) prints, or None when it cannot be told statically."""
    if not words:
        return None
    prog = posixpath.basename(words[0])
    args = words[1:]
    if any(a.startswith(("$", "`")) or "$(" in a or "${" in a for a in args):
        return None  # an expansion: its value is not in the command
    if prog == "echo":
        newline, escapes = True, False
        while args and re.fullmatch(r"-[neE]+", args[0]):
            newline = newline and "n" not in args[0]
            escapes = "e" in args[0] or escapes
            args = args[1:]
        text = " ".join(args)
        return (_unescape(text) if escapes else text) + ("\n" if newline else "")
    if prog == "printf" and args and not args[0].startswith("-"):
        fmt, rest = args[0], args[1:]
        if re.search(r"%(?!%|s)", fmt):
            return None  # a number format: left to the shell
        pieces = fmt.split("%s")
        if len(pieces) - 1 > len(rest) and rest:
            return None
        out = pieces[0] + "".join(str(rest[i] if i < len(rest) else "") + piece for i, piece in enumerate(pieces[1:]))
        return _unescape(out.replace("%%", "%"))
    if prog == "cat" and len(words) == 1 and stdin is not None:
        return stdin + "\n"
    return None


def resolve(path: str, cwd: str) -> str:
    """Normalise a path as the shell would see it; ``~`` and ``$HOME`` stay symbolic."""
    if path.startswith(("$HOME", "${HOME}")):
        path = "~" + path[path.index("}") + 1 if path.startswith("${") else 5 :]
    if path == "~" or path.startswith("~/"):
        return "~" + (posixpath.normpath(path[1:]) if len(path) > 1 else "")
    if not path.startswith("/"):
        path = posixpath.join(cwd, path)
    out = posixpath.normpath(path)
    return "/" + out.lstrip("/") if out.startswith("//") else out


def _strip_heredocs(cmd: str) -> tuple[str, dict[int, str]]:
    """Set heredoc bodies aside: they are data, and their newlines are not separators.

    Returns the command without them and, per line of that command (by index), the
    first heredoc body that line feeds (a program's stdin, or a file's content).
    """
    if "<<" not in cmd:
        return cmd, {}
    out: list[str] = []
    bodies: dict[int, str] = {}
    lines = cmd.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        terminators = [(m.group(2), m.group(0).startswith("<<-")) for m in _HEREDOC.finditer(line)]
        i += 1
        for term, dash in terminators:
            start = i
            while i < len(lines) and (lines[i].strip() if dash else lines[i]) != term:
                i += 1
            bodies.setdefault(len(out) - 1, "\n".join(lines[start:i]))
            i += 1  # the terminator line itself
    return "\n".join(out), bodies


def _tokens(line: str) -> list[tuple[bool, str]]:
    """(is_operator, text) tokens of one logical line, with quotes removed from words."""
    out: list[tuple[bool, str]] = []
    prev_end = -1
    for m in _TOKEN.finditer(line):
        piece = m.group(0)
        if piece[0] in "#" and (prev_end != m.start() or not out):
            break  # a comment runs to the end of the line
        if _OPERATOR.fullmatch(piece):
            out.append((True, piece))
        else:
            if piece[0] == "'":
                piece = piece[1:-1] if piece.endswith("'") and len(piece) > 1 else piece[1:]
            elif piece[0] == '"':
                piece = piece[1:-1] if piece.endswith('"') and len(piece) > 1 else piece[1:]
            elif piece[0] == "\\":
                piece = piece[1:]
            if out and not out[-1][0] and m.start() == prev_end:
                out[-1] = (False, out[-1][1] + piece)
            else:
                out.append((False, piece))
        prev_end = m.end()
    return out


def _positional(prog: str, args: list[str]) -> list[str]:
    """Arguments that are not options or option values."""
    takes_value = _OPTION_WITH_VALUE.get(prog, set())
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a.startswith("-") and len(a) > 1:
            if a in takes_value:
                skip = True
            continue
        out.append(a)
    return out


def _inline_script(args: list[str]) -> str | None:
    """The script of ``bash -c SCRIPT`` / ``bash -lc SCRIPT``, else None."""
    for k, a in enumerate(args):
        if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
            return args[k + 1] if k + 1 < len(args) else None
        if not a.startswith("-"):
            return None
    return None


def _pathlike(word: str) -> bool:
    return bool(word) and not word.isdigit() and not word.startswith(("$(", "`", "http://", "https://"))


class _Acc:
    __slots__ = ("appended", "copies", "cwd", "execs", "flags", "imports", "lists", "pipe", "programs", "pythonpath",
                 "reads", "removed", "stdin", "writes", "written")

    def __init__(self, cwd: str):
        self.reads: list[str] = []
        self.writes: list[str] = []
        self.lists: list[str] = []
        self.execs: list[str] = []
        self.programs: list[str] = []
        self.flags: set[str] = set()
        self.cwd = cwd
        self.imports: list[str] = []
        self.copies: list[tuple[str, str]] = []
        self.written: list[tuple[str, str]] = []
        self.appended: list[tuple[str, str]] = []
        self.removed: list[str] = []
        self.pipe: str | None = None  # the text the previous command of a pipeline printed, when known
        self.pythonpath: list[str] = []  # from ``export PYTHONPATH=...`` earlier in the command
        self.stdin: str | None = None  # the heredoc body fed to the current line


def _modules(code: str) -> list[str]:
    """Dotted module names ``code`` imports (``import a.b, c`` / ``from a.b import x``)."""
    out: list[str] = []
    for m in [*_IMPORT.finditer(code), *_IMPORT_INLINE.finditer(code)]:
        if m.group(1):
            out.append(m.group(1))
        elif m.group(2):
            out += [w.strip().split()[0] for w in m.group(2).split(",") if w.strip()]
    return [m for m in dict.fromkeys(out) if not m.startswith(".")]


def python_imports(code: str, dirs: list[str], cwd: str) -> list[str]:
    """Candidate files for each module ``code`` imports, in each search dir (code's own sys.path first)."""
    search = [resolve(m.group(2), cwd) for m in _SYS_PATH.finditer(code)] + dirs
    out: list[str] = []
    for module in _modules(code):
        rel = module.replace(".", "/")
        for d in dict.fromkeys(search):
            out += [f"{d.rstrip('/')}/{rel}.py", f"{d.rstrip('/')}/{rel}/__init__.py"]
    return out


def _python(args: list[str], env_path: list[str], acc: _Acc) -> None:
    """What a Python interpreter run with ``args`` executes and imports."""
    cwd = acc.cwd
    dirs = [resolve(d, cwd) for d in env_path if d]
    k = 0
    while k < len(args) and args[k].startswith("-") and args[k] not in ("-c", "-m", "-"):
        k += 2 if args[k] in ("-W", "-X") else 1
    rest = args[k:]
    if rest and rest[0] == "-c":
        code = rest[1] if len(rest) > 1 else ""
        acc.imports += python_imports(code, [*dirs, cwd], cwd)
    elif rest and rest[0] == "-m":
        if len(rest) > 1 and re.fullmatch(r"[\w.]+", rest[1]):
            acc.imports += python_imports(f"import {rest[1]}", [*dirs, cwd], cwd)
    elif not rest or rest[0] == "-":
        if acc.stdin:
            acc.imports += python_imports(acc.stdin, [*dirs, cwd], cwd)
    elif _pathlike(rest[0]):
        script = resolve(rest[0], cwd)
        acc.execs.append(script)
        # The script's own imports are unknown here (its text is not in the command),
        # unless it was written by a heredoc in this same command.
        for path, text in acc.written:
            if path == script:
                acc.imports += python_imports(text, [*dirs, posixpath.dirname(script)], cwd)


def _simple(words: list[str], acc: _Acc) -> None:
    """Record what one simple command (no operators) does."""
    i = 0
    env_path = list(acc.pythonpath)
    while i < len(words) and (_ASSIGNMENT.match(words[i]) or words[i] in _WRAPPERS):
        if words[i].startswith("PYTHONPATH="):
            env_path = [p for p in words[i][len("PYTHONPATH="):].split(":") if p and not p.startswith("$")] + env_path
        if words[i] == "timeout" or (words[i] == "sudo" and i + 1 < len(words) and words[i + 1] == "-u"):
            i += 1
        i += 1
    while i < len(words) and words[i] == "timeout":
        i += 2
    if i >= len(words):
        return
    word0 = words[i]
    prog = posixpath.basename(word0)
    args = words[i + 1 :]
    acc.programs.append(prog)
    cwd = acc.cwd
    text = " ".join(words[i:])

    # A lone -h means help for scripts and most CLIs, but "human-readable" for ls/du/df/sort.
    short_help = "-h" in args and (args == ["-h"] or "/" in word0 or bool(_INTERPRETERS.match(prog))
                                   or prog.endswith((".py", ".sh", ".js")))
    if "--help" in args or short_help or prog in _HELP_PROGRAMS or "help(" in text:
        acc.flags.add("help")
    if _INSTALL.match(text.replace("sudo ", "")):
        acc.flags.add("install")

    if prog == "export":
        for a in args:
            if a.startswith("PYTHONPATH="):
                acc.pythonpath = [p for p in a[len("PYTHONPATH="):].split(":") if p and not p.startswith("$")] \
                    + acc.pythonpath
        return
    if prog == "cd":
        target = args[0] if args else "~"
        if target != "-":
            acc.cwd = resolve(target, cwd)
        return
    if "/" in word0 and prog not in _WRAPPERS:
        acc.execs.append(resolve(word0, cwd))
        return
    pos = _positional(prog if not _INTERPRETERS.match(prog) else re.sub(r"[0-9.]+$", "", prog), args)
    if prog in _SHELLS:
        inline = _inline_script(args)
        if inline is not None:
            _line_block(inline, acc)
            return
    if _PYTHON.match(prog):
        _python(args, env_path, acc)
        return
    if _INTERPRETERS.match(prog):
        if "-c" in args or "-e" in args or "-m" in args:
            return
        if pos and pos[0] != "-" and _pathlike(pos[0]):
            acc.execs.append(resolve(pos[0], cwd))
        return
    if prog in _RUNNERS:
        sub = _RUNNERS[prog]
        rest = args[1:] if sub is not None and args and args[0] == sub else (args if sub is None else [])
        if rest:
            _simple(rest, acc)
        return
    if prog in ("sed", "perl") and any(a.startswith(("-i", "-pi")) for a in args):
        files = pos[1:] if prog == "sed" and "-e" not in args and "-f" not in args else pos
        if prog == "perl":
            files = pos[1:] if pos else []
        acc.writes.extend(resolve(p, cwd) for p in files if _pathlike(p))
        return
    if prog in _READERS:
        acc.reads.extend(resolve(p, cwd) for p in pos if _pathlike(p))
        return
    if prog in _PATTERN_FIRST:
        explicit = "-e" in args or "-f" in args or (prog == "jq" and not pos)
        files = pos if explicit else pos[1:]
        acc.reads.extend(resolve(p, cwd) for p in files if _pathlike(p))
        return
    if prog in _LISTERS:
        if prog == "find":
            pos = []
            for a in args:
                if a.startswith(("-", "(", "!")):
                    break
                pos.append(a)
        acc.lists.extend(resolve(p, cwd) for p in (pos or ["."]) if _pathlike(p))
        return
    if prog == "tee":
        targets = [resolve(p, cwd) for p in pos if _pathlike(p)]
        acc.writes.extend(targets)
        text = acc.pipe if acc.pipe is not None else acc.stdin
        if text is not None:
            into = acc.appended if ("-a" in args or "--append" in args) else acc.written
            into.extend((t, text) for t in targets)
        return
    if prog in _COPIERS:
        if len(pos) >= 2:
            srcs = [resolve(p, cwd) for p in pos[:-1] if _pathlike(p)]
            dst = resolve(pos[-1], cwd)
            acc.reads.extend(srcs)
            acc.writes.append(dst)
            if prog != "ln" or "-s" in args or "-sf" in args:
                for src in srcs:
                    # Into a folder (several sources, or a trailing slash): the file keeps its name.
                    into = len(srcs) > 1 or pos[-1].endswith("/")
                    acc.copies.append((src, f"{dst}/{posixpath.basename(src)}" if into else dst))
        return
    if prog in _MODIFIERS:
        acc.writes.extend(resolve(p, cwd) for p in pos if _pathlike(p))
        if prog in _REMOVERS:
            acc.removed.extend(resolve(p, cwd) for p in pos if _pathlike(p))
        return
    if prog in _PERMS:
        acc.writes.extend(resolve(p, cwd) for p in pos[1:] if _pathlike(p))
        return
    if prog == "dd":
        for a in args:
            if a.startswith("of="):
                acc.writes.append(resolve(a[3:], cwd))
            elif a.startswith("if="):
                acc.reads.append(resolve(a[3:], cwd))


def parse_command(cmd: str, cwd: str = "/") -> ShellFacts:
    """Read what ``cmd`` does to the filesystem when run in ``cwd``.

    Returns paths resolved against the working directory as it changes through
    ``cd``; the cwd after the last ``cd`` is returned in ``ShellFacts.cwd``.
    """
    acc = _Acc(cwd)
    _line_block(cmd, acc)
    return ShellFacts(
        reads=tuple(acc.reads),
        writes=tuple(acc.writes),
        lists=tuple(acc.lists),
        execs=tuple(acc.execs),
        programs=tuple(acc.programs),
        flags=frozenset(acc.flags),
        cwd=acc.cwd,
        imports=tuple(dict.fromkeys(acc.imports)),
        copies=tuple(acc.copies),
        written=tuple(acc.written),
        appended=tuple(acc.appended),
        removed=tuple(acc.removed),
    )


def _line_block(cmd: str, acc: _Acc) -> None:
    body, heredocs = _strip_heredocs(cmd)
    pending = ""
    for n, raw in enumerate(body.split("\n")):
        line = pending + raw
        # A quote left open continues onto the next line (``python -c "...``).
        if line.count("'") % 2 == 1 or _open_double(line):
            pending = line + "\n"
            continue
        pending = ""
        acc.stdin = heredocs.get(n)
        _line(line, acc)
    if pending:
        acc.stdin = None
        _line(pending, acc)
    acc.stdin = None


def _open_double(line: str) -> bool:
    if '"' not in line:
        return False
    return len(re.findall(r'(?<!\\)"', line.replace("'\"'", ""))) % 2 == 1


def _line(line: str, acc: _Acc) -> None:
    if not line.strip():
        return
    words: list[str] = []
    tokens = _tokens(line)
    acc.pipe = None
    i = 0
    while i < len(tokens):
        is_op, text = tokens[i]
        if not is_op:
            words.append(text)
        elif text in _SEPARATORS:
            _simple(words, acc)
            acc.pipe = echoed(words, acc.stdin) if text == "|" else None
            words = []
        elif text.startswith("<<"):
            i += 1  # a here-string or heredoc marker: data, not a file
        elif ">" in text and not text.endswith(("&", "-")) and ">&" not in text:
            if i + 1 < len(tokens) and not tokens[i + 1][0]:
                target = tokens[i + 1][1]
                if target not in _NULL_TARGETS:
                    dst = resolve(target, acc.cwd)
                    acc.writes.append(dst)
                    prog = posixpath.basename(words[0]) if words else ""
                    shown = echoed(words, acc.stdin) if text in (">", "1>", ">>", "1>>") else None
                    if prog == "cat" and acc.stdin is not None and len(words) == 1 and not text.endswith(">>"):
                        acc.written.append((dst, acc.stdin))
                    elif prog == "cat" and len(words) == 2 and _pathlike(words[1]) and not text.startswith(">>"):
                        acc.copies.append((resolve(words[1], acc.cwd), dst))
                    elif shown is not None:
                        (acc.appended if text.endswith(">>") else acc.written).append((dst, shown))
                i += 1
        elif text == "<" and i + 1 < len(tokens) and not tokens[i + 1][0]:
            acc.reads.append(resolve(tokens[i + 1][1], acc.cwd))
            i += 1
        i += 1
    _simple(words, acc)
