"""A compiled-template cache shared by the report's Jinja environments (HTML and LaTeX).

Compiling the report's templates costs about half a second of CPU on every build;
Jinja's file-system bytecode cache (a private folder under the system temp dir, never in
the user's repository) keeps the compiled code between builds. Jinja reuses an entry only
while the template's source is unchanged (it checks a checksum) and the Jinja and Python
versions match; the key here also carries every environment option that changes the
compiled code (delimiters, whitespace handling, autoescape, finalize), so the HTML and
LaTeX environments never share an entry and an option changed in code never reads stale
code. Where the temp dir cannot hold the cache, templates are compiled as before.
"""

from __future__ import annotations

import hashlib

import jinja2


class _OptionKeyedCache(jinja2.FileSystemBytecodeCache):
    def __init__(self, options: str) -> None:
        super().__init__()
        self.options = options

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return super().get_cache_key(f"{self.options}|{name}", filename)


def _options(env: jinja2.Environment) -> str:
    """Every environment setting the compiled code of a template depends on."""
    finalize = getattr(env.finalize, "__qualname__", repr(env.finalize)) if env.finalize else None
    settings = (env.block_start_string, env.block_end_string, env.variable_start_string, env.variable_end_string,
                env.comment_start_string, env.comment_end_string, env.line_statement_prefix,
                env.line_comment_prefix, env.trim_blocks, env.lstrip_blocks, env.newline_sequence,
                env.keep_trailing_newline, repr(env.autoescape), finalize, sorted(env.extensions), env.optimized,
                env.is_async)
    return hashlib.sha1(repr(settings).encode()).hexdigest()


def cache_compiled(env: jinja2.Environment) -> jinja2.Environment:
    """Give ``env`` the shared compiled-template cache (after its options are set); returns it."""
    try:
        env.bytecode_cache = _OptionKeyedCache(_options(env))
    except (OSError, RuntimeError):  # no usable temp dir: compile every time, as without the cache
        pass
    return env
