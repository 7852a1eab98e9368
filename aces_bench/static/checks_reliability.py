"""Reliability rules (R0xx): whether the skill prepares the agent for setup,
failure and the limits of what it covers."""

from __future__ import annotations

import os
import re

from aces_bench.static.context import Ctx, Hit, at_skill_md, check
from aces_bench.static.loader import FileEntry

_ERROR_WORDS = re.compile(
    r"\b(?:errors?|fail(?:s|ed|ure|ing)?|exceptions?|retry|retries|troubleshoot\w*|fallback|recover\w*)\b"
)
_PREREQ = re.compile(
    r"prerequisite|requirements?|dependenc|install|set ?up\b|environment|before you (?:begin|start)|getting started|\bneeds?\b"
)
_LIMITS = re.compile(
    r"limitation|known (?:issues|limits)|caveat|constraint|restriction|not supported|unsupported|gotcha|cannot|can't|\bscope\b"
)
_TROUBLE = re.compile(
    r"troubleshoot|common (?:issues|errors|problems|pitfalls|mistakes)|\bfaq\b|debugging|error handling|\berrors\b|pitfalls|known issues|if something goes wrong"
)
_EXAMPLE_HEADING = re.compile(r"example|sample|walkthrough|demo")
_MCP_GUIDE = re.compile(
    r"mcp.{0,80}(?:connect|configur|set ?up|install|authenticat|claude mcp add|mcp\.json)|(?:connect|configur|set ?up|install|authenticat).{0,80}mcp",
    re.DOTALL,
)
_VERIFY = re.compile(
    r"\b(?:verif\w*|validat\w*|check\w*|confirm\w*|tests?|testing|assert\w*|inspect)\b"
)
_SHELL_STRICT = re.compile(r"^\s*set\s+(?:-[a-zA-Z]*e|-o\s+errexit)", re.MULTILINE)
_VALIDATION = {
    "py": re.compile(
        r"argparse|\bclick\b|typer|\bfire\b|docopt|len\(sys\.argv\)|os\.path\.(?:exists|isfile)|\.exists\(\)|\.is_file\(\)|raise (?:ValueError|SystemExit|FileNotFoundError)|sys\.exit\("
    ),
    "sh": re.compile(
        r"\$#|getopts|\$\{1:?\?|-z\s+\"?\$\{?1|\[\[?\s+-[fed]\s|usage", re.IGNORECASE
    ),
    "js": re.compile(
        r"process\.argv\.length|commander|yargs|minimist|parseArgs|throw new Error|process\.exit\("
    ),
}
_LANG = {
    ".py": "py",
    ".sh": "sh",
    ".bash": "sh",
    ".zsh": "sh",
    ".js": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".ts": "js",
}
_REQ_LINE = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*([<>=!~@;].*)?$"
)


def _unavailable(ctx: Ctx, rule_id: str, scripts: list[FileEntry]) -> list[FileEntry]:
    """The scripts whose bodies can be read; records 'not evaluable' for the rest."""
    missing = [s for s in scripts if s.text is None]
    if missing:
        how = (
            "listed in MANIFEST.json but not copied"
            if any(not s.copied for s in missing)
            else "unreadable"
        )
        ctx.not_evaluable[rule_id] = (
            f"{len(missing)} of {len(scripts)} script(s) {how}; their bodies were not checked"
        )
    return [s for s in scripts if s.text is not None]


@check("R001")
def error_handling_missing(ctx: Ctx) -> list[Hit]:
    return (
        []
        if _ERROR_WORDS.search(ctx.body_lower)
        else at_skill_md(
            ctx.doc.body_line, "no word about errors, failures or recovery"
        )
    )


@check("R002")
def script_input_validation(ctx: Ctx) -> list[Hit]:
    scripts = [s for s in ctx.scripts if os.path.splitext(s.rel)[1].lower() in _LANG]
    hits = []
    for s in _unavailable(ctx, "R002", scripts):
        lang = _LANG[os.path.splitext(s.rel)[1].lower()]
        text = s.text or ""
        if lang == "py" and "__main__" not in text and not text.startswith("#!"):
            continue  # an importable module, not a command-line entry point
        if not _VALIDATION[lang].search(text):
            hits.append(
                Hit(
                    s.rel,
                    1,
                    f"{s.rel} reads its inputs without parsing or checking them",
                )
            )
    return hits


@check("R003")
def prerequisites_section_missing(ctx: Ctx) -> list[Hit]:
    return (
        []
        if ctx.heading_matching(_PREREQ) is not None
        else at_skill_md(
            ctx.doc.body_line, "no Prerequisites/Requirements/Setup section"
        )
    )


@check("R004")
def limitations_section_missing(ctx: Ctx) -> list[Hit]:
    return (
        []
        if ctx.heading_matching(_LIMITS) is not None
        else at_skill_md(ctx.doc.body_line, "no Limitations section")
    )


@check("R005")
def troubleshooting_section_missing(ctx: Ctx) -> list[Hit]:
    return (
        []
        if ctx.heading_matching(_TROUBLE) is not None
        else at_skill_md(ctx.doc.body_line, "no Troubleshooting section")
    )


def _strings(value: object) -> list[str]:
    """A frontmatter value as strings: a string, or the strings of a flat list.

    Anything else (mappings, nested or aliased structures) is not stringified, so a
    hostile YAML value cannot blow up the scan."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


@check("R006")
def mcp_connection_guidance_missing(ctx: Ctx) -> list[Hit]:
    declared = any("mcp" in str(k).lower() for k in ctx.fm) or any(
        "mcp" in v.lower()
        for k in ("tools", "allowed-tools", "allowed_tools", "dependencies", "requires")
        for v in _strings(ctx.fm.get(k))
    )
    if not declared or _MCP_GUIDE.search(ctx.body_lower):
        return []
    return at_skill_md(
        1,
        "frontmatter declares MCP but the body never says how to configure or connect the server",
    )


@check("R007")
def examples_missing(ctx: Ctx) -> list[Hit]:
    if ctx.outline.fences or ctx.heading_matching(_EXAMPLE_HEADING) is not None:
        return []
    return at_skill_md(ctx.doc.body_line, "no code block and no Example section")


@check("R008")
def shell_strict_mode_missing(ctx: Ctx) -> list[Hit]:
    shells = [
        s
        for s in ctx.scripts
        if os.path.splitext(s.rel)[1].lower() in (".sh", ".bash", ".zsh")
    ]
    return [
        Hit(s.rel, 1, f"{s.rel} has no 'set -e' / 'set -o errexit'")
        for s in _unavailable(ctx, "R008", shells)
        if not _SHELL_STRICT.search(s.text or "")
    ]


@check("R009")
def dependencies_unpinned(ctx: Ctx) -> list[Hit]:
    hits = []
    for f in ctx.doc.files:
        base = os.path.basename(f.rel).lower()
        if (
            not (base.startswith("requirements") and base.endswith(".txt"))
            or f.text is None
        ):
            continue
        loose = []
        for raw in f.text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line or line.startswith("-"):
                continue
            m = _REQ_LINE.match(line)
            if m and not m.group(3):
                loose.append(m.group(1))
        if loose:
            hits.append(
                Hit(
                    f.rel,
                    None,
                    f"{f.rel}: unpinned {', '.join(loose[:5])}{' ...' if len(loose) > 5 else ''}",
                )
            )
    return hits


@check("R010")
def verification_step_missing(ctx: Ctx) -> list[Hit]:
    return (
        []
        if _VERIFY.search(ctx.body_lower)
        else at_skill_md(ctx.doc.body_line, "no step says how to verify the result")
    )
