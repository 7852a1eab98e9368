"""Credentials a case needs: names in the case, values from the host at run time only.

A skill may ask for its own service credentials (``STRIPE_TOKEN``), one isolated
session per case, but only those the operator lists in ``skill.allow_credentials``:
the skill author does not decide which of the operator's variables a trial receives
(``GH_TOKEN`` or ``PGPASSWORD`` look like nobody's model key, and are the operator's
all the same). Every value passed in is masked in every output (``graders/redact.py``).

Some names are never passed, not even when listed: process and tool settings and model
endpoints (``*_BASE_URL``; refused when a case is parsed) and the model's and judge's
configured variables. A name that looks like an operator credential by rule (a model
provider's or cloud's prefix, ``*_API_KEY``, ``*_AUTH_TOKEN``, ``*_SECRET*``) is named so
in the refusal, so the operator sees what listing it would hand over.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Protocol

from pydantic import AfterValidator

from aces_bench.core.errors import EvalsError


class CredentialCase(Protocol):
    """What the credential rules read of a case (``cases.model.EvalCase`` is one): the
    model validates its names with this module, so this module does not import the model."""

    id: str
    required_credentials: list[str]

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
# Model providers litellm and the harnesses read keys, tokens and endpoints for: any
# name under one of these prefixes is the operator's (OPENAI_ADMIN_KEY as much as
# OPENAI_API_KEY).
LLM_PROVIDERS = (
    "OPENAI", "AZURE_OPENAI", "AZURE", "ANTHROPIC", "CLAUDE", "GEMINI", "GOOGLE", "VERTEXAI", "VERTEX",
    "MISTRAL", "CODESTRAL", "COHERE", "CO", "GROQ", "TOGETHER", "TOGETHERAI", "TOGETHER_AI", "FIREWORKS",
    "FIREWORKS_AI", "DEEPSEEK", "XAI", "OPENROUTER", "PERPLEXITY", "PERPLEXITYAI", "HUGGINGFACE", "HF",
    "REPLICATE", "VOYAGE", "AI21", "NVIDIA", "NVIDIA_NIM", "CEREBRAS", "DASHSCOPE", "MOONSHOT", "ANYSCALE",
    "DEEPINFRA", "SAMBANOVA", "OLLAMA", "HOSTED_VLLM", "VLLM", "LM_STUDIO", "DATABRICKS", "WATSONX",
    "BEDROCK", "SAGEMAKER", "CLOUDFLARE", "NOVITA", "FRIENDLIAI", "BASETEN", "NEBIUS", "DAYTONA", "MODAL",
    "E2B", "LANGFUSE", "LANGSMITH", "HELICONE",
)
# Cloud credentials and settings (AWS_BEARER_TOKEN_BEDROCK, AWS_PROFILE, ...).
CLOUD_PREFIXES = ("AWS", "AMAZON", "GCP", "GCLOUD", "CLOUDSDK", "ARM", "ALIBABA_CLOUD", "OCI", "IBM_CLOUD")
# Process settings a trial depends on: overriding them would redirect what runs. Never
# allowed, not even by the operator.
_PROCESS = frozenset({
    "PATH", "HOME", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP",
    "NODE_OPTIONS", "BASH_ENV", "ENV", "SHELL", "USER", "IFS",
})
_TOOL_PREFIXES = ("HARBOR_", "LITELLM_")
_NEVER = "which a skill cannot name or override; the operator configures model keys and endpoints"
# Generic shapes of a provider key, token or endpoint, whatever service it names.
_KEY_SHAPES = (
    (re.compile(r"_API_KEY$|^API_KEY$"), "an API key (*_API_KEY)"),
    (re.compile(r"_AUTH_TOKEN$|^AUTH_TOKEN$|_OAUTH_TOKEN$"), "an auth token (*_AUTH_TOKEN)"),
    (re.compile(r"(?:^|_)SECRET"), "a secret (*_SECRET*)"),
    (re.compile(r"_(?:ENDPOINT|API_VERSION|ORG_ID|ORGANIZATION)$"), "an endpoint or account setting (*_ENDPOINT, *_ORG_ID, ...)"),
    (re.compile(r"^GOOGLE_APPLICATION_CREDENTIALS$|_CREDENTIALS(?:_FILE)?$"), "a credentials file (*_CREDENTIALS)"),
)


def _prefixed(upper: str, prefixes: Iterable[str]) -> str | None:
    for prefix in prefixes:
        if upper == prefix or upper.startswith(prefix + "_"):
            return prefix
    return None


def never_allowed_reason(name: str) -> str | None:
    """Why ``name`` can never be a case's credential, or None.

    Process and tool settings and model endpoints: naming one would redirect what runs
    or where the model's requests go, so not even the operator can allow it.
    """
    upper = name.upper()
    if upper in _PROCESS:
        return "a process setting"
    for prefix in _TOOL_PREFIXES:
        if upper.startswith(prefix):
            return f"an operator setting ({prefix}*)"
    if upper.endswith(("_BASE_URL", "_API_BASE")):
        return "a model endpoint (*_BASE_URL / *_API_BASE)"
    return None


def operator_reason(name: str, *, operator_names: Iterable[str] = ()) -> str | None:
    """Why ``name`` looks like an operator credential or setting, or None when a skill may use it.

    By rule, not by list of known names: process and tool settings; anything under a
    model provider's or a cloud's prefix (``OPENAI_*``, ``ANTHROPIC_*``, ``AWS_*``);
    any ``*_API_KEY``, ``*_AUTH_TOKEN``, ``*_SECRET*``, ``*_BASE_URL``; and the names
    the operator configured for the model and judge (``operator_names``).
    """
    upper = name.upper()
    reason = never_allowed_reason(name)
    if reason:
        return reason
    if upper in {n.upper() for n in operator_names if n}:
        return "the variable the operator configured for the model or judge"
    provider = _prefixed(upper, LLM_PROVIDERS)
    if provider:
        return f"an LLM provider credential or setting ({provider}_*)"
    cloud = _prefixed(upper, CLOUD_PREFIXES)
    if cloud:
        return f"a cloud credential or setting ({cloud}_*)"
    for shape, what in _KEY_SHAPES:
        if shape.search(upper):
            return what
    return None


def check_credential_name(name: str, *, allowed: Iterable[str] = (), operator_names: Iterable[str] = ()) -> str:
    """Accept a credential name a skill may ask for; ValueError names the problem otherwise.

    ``allowed``: the names the operator lets cases receive (``skill.allow_credentials``);
    every other name is refused. Process and tool settings and the model's and judge's
    own variables are refused even when listed.
    """
    if not isinstance(name, str) or not ENV_NAME.match(name):
        raise ValueError("credential is not an environment variable name (letters, digits, '_')")
    fixed = never_allowed_reason(name)
    if fixed:
        raise ValueError(f"names {fixed}, {_NEVER}")
    operators = {n.upper() for n in operator_names if n}
    if name.upper() in operators:
        raise ValueError(
            "is configured by the operator for the model or judge; a skill cannot name it"
        )
    if name in set(allowed):
        return name
    reason = operator_reason(name)
    if reason:
        raise ValueError(
            f"names {reason}, which looks like an operator credential; a skill cannot name it "
            f"unless the operator allows it explicitly with skill.allow_credentials=[{name}]"
        )
    raise ValueError(
        "is not listed in skill.allow_credentials; a case receives only the credentials the operator "
        f"lists there (skill.allow_credentials=[{name}])"
    )


def check_case_syntax(name: str) -> str:
    """The parse-time check: a variable name that is not a process or tool setting.

    Whether it looks like an operator credential is decided with the study's config
    (``check_credential_name`` with ``skill.allow_credentials``) before anything is
    emitted or run.
    """
    if not isinstance(name, str) or not ENV_NAME.match(name):
        raise ValueError("credential is not an environment variable name (letters, digits, '_')")
    fixed = never_allowed_reason(name)
    if fixed:
        raise ValueError(f"names {fixed}, {_NEVER}")
    return name


CredentialName = Annotated[str, AfterValidator(check_case_syntax)]
"""An environment variable name a case may ask for (syntax and settings checked when parsed;
the operator-credential rule is applied with the study's config, ``check_study_credentials``)."""


def check_study_credentials(
    cases: Iterable[CredentialCase], *, allowed: Iterable[str] = (), operator_names: Iterable[str] = ()
) -> None:
    """Refuse, before anything is emitted or run, a case naming an operator credential.

    EvalsError names the case and the variable, and the config key that allows it.
    """
    allowed = tuple(allowed)
    operators = tuple(n for n in operator_names if n)
    for case in cases:
        for name in case.required_credentials:
            try:
                check_credential_name(name, allowed=allowed, operator_names=operators)
            except ValueError as exc:
                fix = ("remove it from the case's credentials, or give the skill's service its own variable"
                       if name.upper() in {o.upper() for o in operators} or never_allowed_reason(name)
                       else f"remove it from the case's credentials, or allow it with skill.allow_credentials=[{name}]")
                raise EvalsError(f"credential {name!r} {_verb(exc)}", where=f"case {case.id}", fix=fix) from None


def _verb(exc: ValueError) -> str:
    text = str(exc)
    return text if text.startswith(("names", "is ")) else f"is refused: {text}"


def resolve_credentials(
    case: CredentialCase, environ: Mapping[str, str], *, operator_names: Iterable[str] = (), allowed: Iterable[str] = ()
) -> dict[str, str]:
    """Values of the case's required credentials, read from ``environ`` at run time.

    Raises EvalsError naming the case and the variable when one is missing or empty,
    or when it is an operator credential (by rule, see ``operator_reason``; also the
    ones the operator configured under their own names, ``operator_names``, e.g. the
    judge's ``api_key_env``) that ``allowed`` does not list. Callers pass the values
    to the trial's environment; they never go into a task dir.
    """
    check_study_credentials([case], allowed=allowed, operator_names=operator_names)
    values: dict[str, str] = {}
    for name in case.required_credentials:
        value = environ.get(name)
        if value is None or value == "":
            state = "empty" if value == "" else "not set"
            raise EvalsError(
                f"case needs credential {name}, which is {state} in the host environment",
                where=f"case {case.id}",
                fix=f"export {name}=<value> before running (it is passed to the trial only at run time), "
                "or leave this case out with skill.cases",
            )
        values[name] = value
    return values
