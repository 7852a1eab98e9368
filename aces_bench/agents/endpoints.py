"""One meaning of ``model.base_url``, and which wire API each harness speaks.

``model.base_url`` is the endpoint's host, with or without a trailing ``/v1``
(``http://gateway:8000`` and ``http://gateway:8000/v1`` are the same endpoint). Each
harness's client appends its own path, so each is handed the form it expects:

| harness      | API                     | base handed over | calls            |
|--------------|-------------------------|------------------|------------------|
| claude-code  | Anthropic Messages      | host             | /v1/messages     |
| codex        | OpenAI Responses        | host/v1          | /v1/responses    |
| opencode     | Anthropic Messages, or OpenAI (by the model's provider) | host/v1 | /v1/messages, /v1/responses or /v1/chat/completions |
| terminus-2   | litellm: OpenAI Chat, or Anthropic | host/v1 (OpenAI), host (Anthropic) | /v1/chat/completions, /v1/messages |

A URL with any other path (``https://gw.example.com/anthropic``) is handed over as
written. A harness paired with a model of another API family is refused, unless
``model.api`` says the endpoint speaks the harness's API (a translating gateway).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from aces_bench.agents.profiles import profile_running

API_NAMES: dict[str, str] = {"anthropic": "the Anthropic Messages API", "openai-responses": "the OpenAI Responses API",
                             "openai-chat": "the OpenAI Chat Completions API"}

_ANTHROPIC_PREFIXES = ("anthropic/", "claude")
_OPENAI_PREFIXES = ("openai/", "gpt-", "o1", "o3", "o4", "chatgpt", "codex-")


def model_family(name: str | None) -> Literal["anthropic", "openai"] | None:
    """The API family a litellm model name belongs to; None when the name does not say."""
    if not name:
        return None
    low = name.lower()
    if low.startswith(_ANTHROPIC_PREFIXES):
        return "anthropic"
    if low.startswith(_OPENAI_PREFIXES):
        return "openai"
    return None


def split_root(url: str) -> tuple[str, bool]:
    """(the URL without a trailing ``/v1``, whether its path was empty or ``/v1``)."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    plain = path in ("", "/v1")
    root = urlunsplit((parts.scheme, parts.netloc, "" if plain else path, parts.query, parts.fragment))
    return root, plain


def harness_base_url(cli: str | None, agent: str | None, model: str | None, base_url: str | None) -> str | None:
    """The base URL to hand a harness for ``model.base_url`` (module doc)."""
    if not base_url:
        return base_url
    root, plain = split_root(base_url)
    if not plain:
        return base_url
    appends = _appends_v1(cli, agent)
    if appends == "always" or (appends == "anthropic" and model_family(model) == "anthropic"):
        return root
    return root + "/v1"


def _appends_v1(cli: str | None, agent: str | None) -> str:
    """The ``appends_v1`` of the harness running npm CLI ``cli``, else of the one running Harbor
    agent ``agent``; "never" when no profile says."""
    profile = profile_running(cli, agent)
    return profile.appends_v1 if profile else "never"


def cli_apis(cli: str | None) -> tuple[str, ...]:
    """The wire APIs the harness running npm CLI ``cli`` speaks, its own first (its profile's
    ``api`` and ``other_apis``); empty when no profile says."""
    profile = profile_running(cli) if cli else None
    return (profile.api, *profile.other_apis) if profile and profile.api else ()


def check_api(cli: str | None, model: str | None, api: str | None) -> str | None:
    """Why a harness and a model cannot talk (one line naming the fix), or None when they can."""
    speaks = cli_apis(cli)
    if not speaks:
        return None
    if api is not None:
        if api in speaks:
            return None
        return (f"model.api={api} says the endpoint speaks {API_NAMES[api]}, but harness={cli} calls "
                f"{' or '.join(API_NAMES[a] for a in speaks)}; pick a model/endpoint of that API, or another harness")
    family = model_family(model)
    if family is None:
        return None
    if any(a.startswith(family) for a in speaks):
        return None
    need = speaks[0]
    article = "an Anthropic" if family == "anthropic" else "an OpenAI"
    return (f"harness={cli} calls {API_NAMES[need]} but model {model!r} is {article} model; pick a model of that "
            f"API, or set model.api={need} if model.base_url is a gateway that translates")
