"""Environment harvesting: secrets read from the environment and sent over the network.

A data-flow check, not a pattern: it follows values from where the environment is read
to where a network call sends them, in Python (``ast``) and in shell (scripts, and the
``bash``/``python`` code blocks of a SKILL.md or reference an agent would run).

Sources
  - the whole environment: ``os.environ`` (``dict(...)``, ``.copy()``, ``.items()``...),
    ``printenv``, ``env``, ``export -p``, ``declare -x``, ``set``, ``/proc/self/environ``;
  - the secret-looking part of it: a loop or comprehension over the environment that keeps
    names matching KEY/TOKEN/SECRET/PASSWORD/CREDENTIAL/AUTH... (``printenv | grep -E
    'KEY|TOKEN'`` in shell);
  - one variable with a secret-looking name: ``os.environ["GITHUB_TOKEN"]``,
    ``os.getenv("API_KEY")``, ``$AWS_SECRET_ACCESS_KEY``.
Values flow through assignments, containers, string building (f-strings, ``+``,
``%``, ``format``, ``json.dumps``, ``base64``), loop bodies, shell variables, pipes and
files a command wrote.

Sinks (network calls): ``requests``/``httpx``/``aiohttp``-style ``get``/``post``/...,
``urllib``'s ``urlopen``/``Request``, ``http.client`` requests, sockets, ``smtplib``,
``subprocess`` running ``curl``/``wget``; in shell ``curl``, ``wget``, ``nc``/``ncat``/
``socat``/``telnet``, ``/dev/tcp``.

A finding is a flow of the whole or the secret-named environment into any part of a
request; of a secret-named variable into a URL's query string (``?t=$GITHUB_TOKEN``,
``params=``); or of two or more secret-named variables into one request's URL or body.
One credential in an ``Authorization`` header, or one client secret in a token request's
body, is how credentials are meant to be used and is not reported.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|^AWS_|_PAT$|^PAT_",
    re.IGNORECASE,
)
_NOT_SECRET_NAME = re.compile(r"(?:^|_)(?:PATH|FILE|DIR|URL|URI|HOST|PORT|NAME|ID|REGION|ENDPOINT|TYPE|MODE|"
                              r"LEVEL|FORMAT|EXPIRY|TTL|COUNT|LIMIT)$|^(?:KEYBOARD|KEYMAP|KEYCHAIN)", re.IGNORECASE)
ENV = "the whole environment"
FILTERED = "the secret-named environment variables"
# Cheap gates: a text without an environment read and a network word is not analysed.
SOURCE_WORDS = ("environ", "getenv", "printenv", "env", "$")
NETWORK_WORDS = ("requests", "httpx", "urllib", "urlopen", "http.client", "socket", "smtplib", "aiohttp", "curl",
                 "wget", "nc ", "ncat", "socat", "telnet", "/dev/tcp", "fetch")


def secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name)) and not _NOT_SECRET_NAME.search(name)


@dataclass(frozen=True)
class Flow:
    """One source-to-sink flow: where the sink is (1-based line), what flowed, into what."""

    line: int
    what: str
    sink: str
    excerpt: str


def worth_analysing(lower: str) -> bool:
    return any(w in lower for w in SOURCE_WORDS) and any(w in lower for w in NETWORK_WORDS)


# ------------------------------------------------------------------------------------------ Python

_NET_MODULES = ("requests", "httpx", "aiohttp", "urllib", "http.client", "socket", "smtplib", "urllib3", "pycurl")
_NET_METHODS = {"get", "post", "put", "patch", "delete", "head", "request", "send", "sendall", "sendto", "urlopen",
                "Request", "sendmail", "send_message", "fetch", "stream", "options"}
_BODY_KW = {"data", "json", "files", "content", "body", "msg", "message"}
_QUERY_KW = {"params"}
_HEADER_KW = {"headers", "auth", "cookies"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(_dotted(node.func) + "()")
    return ".".join(reversed(parts))


def _const_strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _secret_filter(node: ast.AST | None) -> bool:
    """A test that keeps secret-looking names: it holds a constant like 'TOKEN', '_KEY', 'SECRET|PASSWORD'."""
    return node is not None and any(secret_name(s) or re.search(r"KEY|TOKEN|SECRET|PASSW", s, re.IGNORECASE)
                                    for s in _const_strings(node))


class _Python:
    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.taint: dict[str, frozenset[str]] = {}
        self.exprs: dict[str, ast.AST] = {}  # name -> its last assigned expression (for URL query checks)
        self.env_names = {"environ"} if self._imports_environ() else set()
        self.network = self._imports_network()
        self.flows: list[Flow] = []
        self.returns: dict[str, frozenset[str]] = {}  # function name -> what its return values carry

    def _imports_environ(self) -> bool:
        return any(isinstance(n, ast.ImportFrom) and n.module == "os" and any(a.name == "environ" for a in n.names)
                   for n in ast.walk(self.tree))

    def _imports_network(self) -> bool:
        for n in ast.walk(self.tree):
            names = [a.name for a in n.names] if isinstance(n, ast.Import) else \
                [n.module or ""] if isinstance(n, ast.ImportFrom) else []
            if any(m == mod or m.startswith(mod + ".") for m in names for mod in _NET_MODULES):
                return True
        return False

    # -- taint of an expression
    def _is_environ(self, node: ast.AST) -> bool:
        d = _dotted(node)
        return d == "os.environ" or d in self.env_names

    def of(self, node: ast.AST | None) -> frozenset[str]:
        if node is None:
            return frozenset()
        if self._is_environ(node):
            return frozenset({ENV})
        if isinstance(node, ast.Name):
            return self.taint.get(node.id, frozenset())
        if isinstance(node, ast.Subscript):
            if self._is_environ(node.value):
                key = node.slice
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    return frozenset({f"${key.value}"}) if secret_name(key.value) else frozenset()
                return self.of(key) & frozenset({ENV, FILTERED}) or frozenset()
            return self.of(node.value)
        if isinstance(node, ast.Call):
            func = _dotted(node.func)
            if func in ("os.getenv", "getenv", "os.environ.get", "environ.get", "os.environ.pop") or (
                    isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop")
                    and self._is_environ(node.func.value)):
                if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    name = node.args[0].value
                    return frozenset({f"${name}"}) if secret_name(name) else frozenset()
                return (self.of(node.args[0]) & frozenset({ENV, FILTERED})) if node.args else frozenset()
            out: set[str] = set(self.returns.get(func, frozenset()))
            for a in [*node.args, *(k.value for k in node.keywords)]:
                out |= self.of(a)
            if isinstance(node.func, ast.Attribute):
                out |= self.of(node.func.value)  # x.items(), s.encode(), ",".join(...)
            return frozenset(out)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            over_env = any(self.of(g.iter) & {ENV, FILTERED} for g in node.generators)
            if over_env:
                for g in node.generators:  # the loop variables carry the environment inside the comprehension
                    for t in ast.walk(g.target):
                        if isinstance(t, ast.Name):
                            self.taint[t.id] = frozenset({ENV})
                kept = any(_secret_filter(cond) for g in node.generators for cond in g.ifs)
                return frozenset({FILTERED if kept else ENV})
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            return frozenset().union(*(self.of(p) for p in parts))
        out = set()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                out |= self.of(child)
        return frozenset(out)

    # -- statements, in order, with the enclosing loops over the environment
    def run(self) -> list[Flow]:
        for _ in range(2):  # a second pass sees names tainted later in the file (functions defined above use)
            self._block(self.tree.body, env_loop=False, kept=False)
        for call in (n for n in ast.walk(self.tree) if isinstance(n, ast.Call)):
            self._sink(call)
        seen: set[tuple[int, str]] = set()
        return [f for f in self.flows if (f.line, f.what) not in seen and not seen.add((f.line, f.what))]

    def _assign(self, target: ast.AST, value: frozenset[str], expr: ast.AST | None, env_loop: bool, kept: bool) -> None:
        if env_loop and value & {ENV}:
            value = (value - {ENV}) | {FILTERED if kept else ENV}
        if isinstance(target, ast.Name):
            if value:
                self.taint[target.id] = self.taint.get(target.id, frozenset()) | value
            if expr is not None:
                self.exprs[target.id] = expr
        elif isinstance(target, ast.Subscript | ast.Attribute):
            base = target.value
            while isinstance(base, ast.Subscript | ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and value:
                self.taint[base.id] = self.taint.get(base.id, frozenset()) | value
        elif isinstance(target, ast.Tuple | ast.List):
            for t in target.elts:
                self._assign(t, value, None, env_loop, kept)

    def _block(self, body: list[ast.stmt], env_loop: bool, kept: bool) -> None:
        for st in body:
            self._stmt(st, env_loop, kept)

    def _stmt(self, st: ast.stmt, env_loop: bool, kept: bool) -> None:
        if isinstance(st, ast.Assign):
            v = self.of(st.value)
            for t in st.targets:
                self._assign(t, v, st.value, env_loop, kept)
        elif isinstance(st, ast.AnnAssign | ast.AugAssign) and st.value is not None:
            self._assign(st.target, self.of(st.value), st.value, env_loop, kept)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Attribute):
            f = st.value.func
            if f.attr in ("update", "append", "extend", "add", "setdefault", "insert", "write"):
                v = frozenset().union(*(self.of(a) for a in st.value.args)) if st.value.args else frozenset()
                self._assign(f.value, v, None, env_loop, kept)
        elif isinstance(st, ast.For | ast.AsyncFor):
            it = self.of(st.iter)
            loop = bool(it & {ENV, FILTERED})
            if loop:
                self._assign(st.target, frozenset({ENV}), None, False, False)
            self._block(st.body, env_loop or loop, kept)
            self._block(st.orelse, env_loop, kept)
        elif isinstance(st, ast.If):
            self._block(st.body, env_loop, kept or (env_loop and _secret_filter(st.test)))
            self._block(st.orelse, env_loop, kept)
        elif isinstance(st, ast.With | ast.AsyncWith | ast.Try | ast.While):
            for field in ("body", "orelse", "finalbody"):
                self._block(getattr(st, field, []) or [], env_loop, kept)
            for h in getattr(st, "handlers", []) or []:
                self._block(h.body, env_loop, kept)
        elif isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self._block(st.body, False, False)
            if not isinstance(st, ast.ClassDef):
                carried = frozenset().union(*(self.of(r.value) for r in ast.walk(st)
                                              if isinstance(r, ast.Return) and r.value is not None))
                if carried:
                    self.returns[st.name] = self.returns.get(st.name, frozenset()) | carried

    # -- sinks
    def _is_network(self, call: ast.Call) -> str | None:
        func = _dotted(call.func)
        head = func.split(".")[0]
        if head in ("requests", "httpx", "aiohttp", "urllib3", "socket", "smtplib") or func.startswith(
                ("urllib.request.", "http.client.")) or func in ("urlopen", "Request", "urllib.request.urlopen"):
            return func
        last = func.rsplit(".", 1)[-1]
        if self.network and last in _NET_METHODS and "." in func and head not in ("os", "json", "self.environ"):
            return func
        if func in ("subprocess.run", "subprocess.call", "subprocess.check_output", "subprocess.Popen",
                    "subprocess.check_call", "os.system", "os.popen") and call.args:
            words = " ".join(_const_strings(call.args[0]))
            if re.search(r"\b(?:curl|wget|nc|ncat|socat)\b", words):
                return func
        return None

    def _sink(self, call: ast.Call) -> None:
        func = self._is_network(call)
        if func is None:
            return
        if func.startswith(("subprocess.", "os.")):  # the command line; env= is the child's environment, not sent
            call = ast.Call(func=call.func, args=[call.args[0]], keywords=[], lineno=call.lineno,
                            col_offset=call.col_offset, end_lineno=call.end_lineno, end_col_offset=call.end_col_offset)
        url = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "url"), None)
        roles: dict[str, set[str]] = {"url": set(self.of(url)) if url is not None else set(), "query": set(),
                                      "body": set(), "headers": set()}
        for a in call.args[1:]:
            roles["body"] |= self.of(a)
        for k in call.keywords:
            role = "query" if k.arg in _QUERY_KW else "headers" if k.arg in _HEADER_KW else \
                "url" if k.arg == "url" else "body"
            roles[role] |= self.of(k.value)
        every = set().union(*roles.values())
        line = getattr(call, "lineno", 0)
        excerpt = ast.get_source_segment(self._src, call) if hasattr(self, "_src") else func
        excerpt = " ".join((excerpt or func).split())[:120]
        for whole in (ENV, FILTERED):
            if whole in every:
                self.flows.append(Flow(line, whole, func, excerpt))
                return
        secrets = lambda s: sorted(x for x in s if x.startswith("$"))  # noqa: E731
        in_query = secrets(roles["query"]) + (secrets(roles["url"]) if self._url_query(url) else [])
        if in_query:
            self.flows.append(Flow(line, ", ".join(dict.fromkeys(in_query)) + " in the URL's query string", func,
                                   excerpt))
            return
        sent = secrets(roles["url"] | roles["body"])
        if len(sent) >= 2:
            self.flows.append(Flow(line, ", ".join(sent), func, excerpt))

    def _url_query(self, url: ast.AST | None, depth: int = 0) -> bool:
        """Whether a secret in ``url`` lands in its query string: text up to it holds '?' (or '&' / '=')."""
        if url is None or depth > 3:
            return False
        if isinstance(url, ast.Name) and url.id in self.exprs:
            return self._url_query(self.exprs[url.id], depth + 1)
        if isinstance(url, ast.JoinedStr):
            before = ""
            for v in url.values:
                if isinstance(v, ast.Constant):
                    before += str(v.value)
                elif self.of(v.value) and re.search(r"[?&][^/]*$", before):
                    return True
            return False
        if isinstance(url, ast.BinOp) and isinstance(url.op, ast.Add):
            left = "".join(_const_strings(url.left))
            return bool(self.of(url.right)) and bool(re.search(r"[?&][^/]*$", left)) or self._url_query(url.left, depth + 1)
        if isinstance(url, ast.BinOp) and isinstance(url.op, ast.Mod):
            fmt = "".join(_const_strings(url.left))
            return "?" in fmt and bool(self.of(url.right))
        if isinstance(url, ast.Call) and isinstance(url.func, ast.Attribute) and url.func.attr == "format":
            fmt = "".join(_const_strings(url.func.value))
            return "?" in fmt and any(self.of(a) for a in [*url.args, *(k.value for k in url.keywords)])
        return False


_PY_SOURCE = re.compile(r"environ|getenv")
_PY_NETWORK = re.compile(r"requests|httpx|aiohttp|urllib|urlopen|http\.client|socket|smtplib|pycurl|curl|wget")


def python_flows(text: str) -> list[Flow]:
    if not (_PY_SOURCE.search(text) and _PY_NETWORK.search(text)):
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    p = _Python(tree)
    p._src = text  # type: ignore[attr-defined]
    return p.run()


# ------------------------------------------------------------------------------------------- shell

_DUMP = re.compile(r"^\s*(?:sudo\s+)?(?:printenv|env|export\s+-p|declare\s+-x|set|compgen\s+-v)\s*$|"
                   r"^\s*(?:cat|strings|tr\b[^|]*<)\s*[^|]*/proc/(?:self|\$\$|\d+)/environ")
_NET_CMD = re.compile(r"^\s*(?:sudo\s+)?(?:\S*/)?(curl|wget|nc|ncat|netcat|socat|telnet|http|https|xh)\b|/dev/(?:tcp|udp)/")
_READS_STDIN = re.compile(r"@-|--data-binary\s+@-|(?:-T|--upload-file)\s+-(?:\s|$)|--post-file[= ](?:-|/dev/stdin)|"
                          r"^\s*(?:nc|ncat|netcat|socat|telnet)\b|/dev/(?:tcp|udp)/")
_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_ASSIGN = re.compile(r"^\s*(?:export\s+|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_UPLOAD = re.compile(r"(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form)\s*['\"]?[^'\"\s]*@([^\s'\"]+)|"
                     r"(?:-T|--upload-file|--post-file)[= ]\s*['\"]?([^\s'\"]+)|<\s*([^\s|;&]+)")
_REDIRECT = re.compile(r"(?<![<>&0-9])>{1,2}\s*['\"]?([^\s;&|'\"]+)")
_HEADER = re.compile(r"(?:-H|--header)\s*(?:'[^']*'|\"[^\"]*\"|\S+)")


def _logical_lines(text: str) -> list[tuple[int, str]]:
    out, buf, start = [], "", 0
    for n, line in enumerate(text.splitlines(), 1):
        if not buf:
            start = n
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        buf += line
        out.append((start, buf))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


def _split(text: str, pipes: bool) -> list[str]:
    """``text`` split on ``;``, ``&&``, ``||`` (``pipes`` False) or on a lone ``|`` (True), outside quotes."""
    out, buf, quote, i = [], "", "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            buf += ch
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"' and i + 1 < len(text):
                buf += text[i + 1]
                i += 1
        elif ch in "'\"":
            quote = ch
            buf += ch
        elif pipes and ch == "|" and text[i + 1:i + 2] != "|" and text[i - 1:i] != "|":
            out.append(buf)
            buf = ""
        elif not pipes and (ch == ";" or text[i:i + 2] in ("&&", "||")):
            out.append(buf)
            buf = ""
            i += 1 if ch == ";" else 2
            continue
        else:
            buf += ch
        i += 1
    out.append(buf)
    return out


def _segments(line: str) -> list[list[str]]:
    """The line's commands (split on ; && ||), each a pipeline split on |, quotes respected."""
    return [_split(cmd, True) for cmd in _split(line, False)]


def _source(seg: str, tainted: dict[str, str]) -> str | None:
    """What environment a pipeline stage prints: the whole of it, the secret part, or None."""
    s = seg.strip()
    if _DUMP.search(s):
        return ENV
    m = re.match(r"^\s*(?:echo|printf)\b(.*)$", s)
    if m:
        names = _VAR.findall(m.group(1))
        if any(tainted.get(n) in (ENV, FILTERED) for n in names):
            return next(tainted[n] for n in names if tainted.get(n) in (ENV, FILTERED))
        secrets = [n for n in names if secret_name(n) or tainted.get(n, "").startswith("$")]
        if len(secrets) >= 2:
            return "$" + ", $".join(secrets)
    return None


def _filter_keeps_secrets(seg: str) -> bool:
    return bool(re.match(r"^\s*(?:grep|egrep|rg|awk|sed)\b", seg.strip())) and bool(
        re.search(r"KEY|TOKEN|SECRET|PASSW|CRED|AUTH", seg, re.IGNORECASE))


_SH_GATE = re.compile(r"\$|printenv|\benv\b|export\s+-p|declare\s+-x|environ|\bset\b")
_SH_NETWORK = re.compile(r"curl|wget|\bnc\b|ncat|netcat|socat|telnet|/dev/(?:tcp|udp)|\bxh\b|\bhttps?\s")


def shell_flows(text: str, line_offset: int = 0) -> list[Flow]:
    if not (_SH_NETWORK.search(text) and _SH_GATE.search(text)):
        return []
    tainted: dict[str, str] = {}  # shell variable -> ENV, FILTERED or "$NAME" (a secret it holds)
    files: dict[str, str] = {}  # file path -> what environment it holds
    flows: list[Flow] = []
    for n, line in _logical_lines(text):
        code = line.split(" #", 1)[0] if not line.lstrip().startswith("#") else ""
        if not code.strip():
            continue
        for pipeline in _segments(code):
            what: str | None = None
            for i, seg in enumerate(pipeline):
                src = _source(seg, tainted)
                if src is not None and what is None:
                    what = src
                elif what is not None and _filter_keeps_secrets(seg):
                    what = FILTERED if what == ENV else what
                net = _NET_CMD.search(seg)
                if net and what is not None and i > 0 and _READS_STDIN.search(seg):
                    flows.append(Flow(n + line_offset, what, net.group(1) or "/dev/tcp", " ".join(line.split())[:120]))
                    what = None
                if net:
                    flow = _net_args(seg, tainted, files)
                    if flow is not None:
                        flows.append(Flow(n + line_offset, flow, net.group(1) or "/dev/tcp", " ".join(line.split())[:120]))
            # printenv > file / X=$(printenv | grep TOKEN)
            last = pipeline[-1]
            redirect = _REDIRECT.search(last)
            if what is not None and redirect:
                files[redirect.group(1)] = what
            m = _ASSIGN.match(pipeline[0])
            if m:
                value = "|".join([m.group(2), *pipeline[1:]])
                inner = re.search(r"\$\((.*)\)|`(.*)`", value)
                held: str | None = None
                if inner:
                    stages = _split(inner.group(1) or inner.group(2) or "", True)
                    if stages and _source(stages[0], tainted):
                        held = _source(stages[0], tainted)
                        if held == ENV and any(_filter_keeps_secrets(s) for s in stages[1:]):
                            held = FILTERED
                if held is None:
                    names = _VAR.findall(value)
                    wholes = [tainted[x] for x in names if tainted.get(x) in (ENV, FILTERED)]
                    secrets = [x for x in names if secret_name(x)] + [tainted[x] for x in names
                                                                      if tainted.get(x, "").startswith("$")]
                    held = wholes[0] if wholes else ("$" + secrets[0].lstrip("$") if len(secrets) == 1 else
                                                     ", ".join("$" + s.lstrip("$") for s in secrets) if secrets else None)
                if held is not None:
                    tainted[m.group(1)] = held
    return flows


def _net_args(seg: str, tainted: dict[str, str], files: dict[str, str]) -> str | None:
    """What a network command's own arguments send: a file holding the environment, an env variable,
    secret-named variables in its URL's query or two or more in its request."""
    for m in _UPLOAD.finditer(seg):
        path = next(g for g in m.groups() if g)
        if path in files:
            return files[path]
    body = _HEADER.sub(" ", seg)  # one credential in a header is how it is meant to be used
    names = _VAR.findall(body)
    for x in names:
        if tainted.get(x) in (ENV, FILTERED):
            return tainted[x]
    secret = [x for x in names if secret_name(x) or tainted.get(x, "").startswith("$")]
    query = [x for x in secret if re.search(r"[?&][^\s'\"/]*\$\{?" + x + r"\b", body)]
    if query:
        return ", ".join("$" + x for x in dict.fromkeys(query)) + " in the URL's query string"
    if len(set(secret)) >= 2:
        return ", ".join("$" + x for x in dict.fromkeys(secret))
    return None


# ---------------------------------------------------------------------------------------- markdown

_FENCE = re.compile(r"^(?P<indent>[ \t]{0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)?"
                    r"(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL)
_SHELL_LANGS = {"bash", "sh", "shell", "zsh", "console", "shell-session", "terminal"}
_PY_LANGS = {"python", "py", "python3"}


def markdown_flows(text: str) -> list[Flow]:
    """Flows in the fenced code blocks of a markdown file (prose is not code)."""
    out: list[Flow] = []
    for m in _FENCE.finditer(text):
        lang = m.group("lang").lower()
        body = m.group("body")
        first = text.count("\n", 0, m.start("body"))
        if lang in _SHELL_LANGS:
            if lang in ("console", "shell-session", "terminal"):
                body = "\n".join(re.sub(r"^\s*[$#]\s", "", ln) for ln in body.splitlines())
            out += shell_flows(body, first)
        elif lang in _PY_LANGS:
            out += [Flow(f.line + first, f.what, f.sink, f.excerpt) for f in python_flows(body)]
    return out


def flows(rel: str, text: str) -> list[Flow]:
    """Environment-harvesting flows in one file, by its kind."""
    low = rel.lower()
    if not worth_analysing(text.lower()):
        return []
    if low.endswith((".py", ".pyw")):
        return python_flows(text)
    if low.endswith((".sh", ".bash", ".zsh")) or text.startswith(("#!/bin/sh", "#!/bin/bash", "#!/usr/bin/env bash")):
        return shell_flows(text)
    if low.endswith((".md", ".markdown")):
        return markdown_flows(text)
    return []


# ------------------------------------------------------------------------------------------ severity

_URL_HOST = re.compile(r"\bhttps?://([A-Za-z0-9.-]+\.[A-Za-z]{2,})", re.IGNORECASE)
_SECRET_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
# Name prefixes that say nothing of the service a credential belongs to.
_GENERIC_PREFIX = frozenset({"API", "SECRET", "ACCESS", "AUTH", "MY", "APP", "CLIENT", "PRIVATE", "SERVICE", "USER",
                             "BEARER", "TOKEN", "KEY", "PASSWORD", "SESSION", "X"})
_ALIASES = {"GH": "GITHUB", "HF": "HUGGINGFACE", "HUGGING": "HUGGINGFACE", "GCP": "GOOGLE", "GOOGLEAPIS": "GOOGLE"}


def service_of(variable: str) -> str | None:
    """The service a credential's name says it belongs to (``GITHUB_TOKEN`` -> ``github``), or None."""
    first = variable.upper().split("_", 1)[0]
    if not first or first in _GENERIC_PREFIX:
        return None
    return _ALIASES.get(first, first).lower()


def own_host(service: str, host: str) -> bool:
    """Whether ``host`` is the service's own: its registered name (the label before the TLD) starts with
    the service (``github`` -> api.github.com, raw.githubusercontent.com; never github.com.attacker.example)."""
    labels = host.lower().rstrip(".").split(".")
    return len(labels) >= 2 and labels[-2].startswith(service)


def flow_severity(flow: Flow, text: str, default: str) -> tuple[str, str]:
    """(severity, why) of a flow: the whole or filtered environment is critical wherever it goes;
    secret-named variables sent only to their own services' hosts are informational; the rest keeps ``default``.

    The hosts are the URLs written in the request itself, else every URL the file names (a
    helper taking its URL as a parameter): one host of another service keeps the flow at ``default``.
    """
    if flow.what in (ENV, FILTERED):
        return "critical", "critical: it leaves the machine, whoever receives it"
    hosts = set(_URL_HOST.findall(flow.excerpt)) or set(_URL_HOST.findall(text))
    services = {service_of(v) for v in _SECRET_VAR.findall(flow.what)}
    if not hosts or not services or None in services:
        return default, ""
    if all(any(own_host(s, h) for h in hosts) for s in services) and \
            all(any(own_host(s, h) for s in services) for h in hosts):  # type: ignore[arg-type]
        return "info", f"informational: only to its own service's host ({', '.join(sorted(hosts))})"
    return default, ""
