"""Credentials a case needs: names in the case, values from the host at run time only.

A skill may ask for its own service credentials (``STRIPE_TOKEN``), one isolated
session per case. It may never name an operator credential: the model provider keys
and endpoints the operator configures for the agent and the judge, or Harbor's and
litellm's own settings. Naming one would let a skill read or redirect them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator

from aces_bench.errors import EvalsError

if TYPE_CHECKING:
    from aces_bench.datasets.model import EvalCase

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
# Model providers litellm and the harnesses read keys, tokens and endpoints for.
LLM_PROVIDERS = (
    "OPENAI", "AZURE_OPENAI", "AZURE", "ANTHROPIC", "CLAUDE", "GEMINI", "GOOGLE", "VERTEXAI", "VERTEX",
    "MISTRAL", "CODESTRAL", "COHERE", "CO", "GROQ", "TOGETHER", "TOGETHERAI", "TOGETHER_AI", "FIREWORKS",
    "FIREWORKS_AI", "DEEPSEEK", "XAI", "OPENROUTER", "PERPLEXITY", "PERPLEXITYAI", "HUGGINGFACE", "HF",
    "REPLICATE", "VOYAGE", "AI21", "NVIDIA", "NVIDIA_NIM", "CEREBRAS", "DASHSCOPE", "MOONSHOT", "ANYSCALE",
    "DEEPINFRA", "SAMBANOVA", "OLLAMA", "HOSTED_VLLM", "VLLM", "LM_STUDIO", "DATABRICKS", "WATSONX",
    "BEDROCK", "SAGEMAKER", "CLOUDFLARE", "NOVITA", "FRIENDLIAI", "BASETEN", "NEBIUS", "DAYTONA", "MODAL",
    "E2B", "LANGFUSE", "LANGSMITH", "HELICONE",
)
_SECRET_SUFFIX = re.compile(r"_(API_KEY|KEY|TOKEN|SECRET|API_BASE|BASE_URL|ENDPOINT|API_VERSION|ORG_ID|ORGANIZATION|PROJECT)$")
_EXACT = frozenset({
    "OPENAI_API_BASE", "HF_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
    "AWS_REGION_NAME", "AWS_PROFILE", "GOOGLE_APPLICATION_CREDENTIALS", "CLAUDE_CODE_OAUTH_TOKEN",
    # Process settings a trial depends on: overriding them would redirect what runs.
    "PATH", "HOME", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME", "SHELL", "USER",
})
_PREFIXES = ("HARBOR_", "LITELLM_")


def operator_reason(name: str) -> str | None:
    """Why ``name`` is an operator credential or setting, or None when a skill may use it."""
    upper = name.upper()
    if upper in _EXACT:
        return "an operator credential or process setting"
    for prefix in _PREFIXES:
        if upper.startswith(prefix):
            return f"an operator setting ({prefix}*)"
    if upper.endswith(("_BASE_URL", "_API_BASE")):
        return "a model endpoint (*_BASE_URL / *_API_BASE)"
    m = _SECRET_SUFFIX.search(upper)
    if m and upper[: m.start()] in LLM_PROVIDERS:
        return f"an LLM provider credential ({upper[: m.start()]})"
    return None


def check_credential_name(name: str) -> str:
    """Accept a credential name a skill may ask for; ValueError names the problem otherwise."""
    if not isinstance(name, str) or not ENV_NAME.match(name):
        raise ValueError("credential is not an environment variable name (letters, digits, '_')")
    reason = operator_reason(name)
    if reason:
        raise ValueError(
            f"names {reason}, which a skill cannot name or override; "
            "the operator configures model keys and endpoints"
        )
    return name


CredentialName = Annotated[str, AfterValidator(check_credential_name)]
"""An environment variable name a skill may ask for (validated by ``check_credential_name``)."""


def resolve_credentials(
    case: EvalCase, environ: Mapping[str, str], *, operator_names: Iterable[str] = ()
) -> dict[str, str]:
    """Values of the case's required credentials, read from ``environ`` at run time.

    Raises EvalsError naming the case and the variable when one is missing or empty,
    or when it is an operator credential (also the ones the operator configured under
    their own names, ``operator_names``, e.g. the judge's ``api_key_env``). Callers
    pass the values to the trial's environment; they never go into a task dir.
    """
    operators = {n for n in operator_names if n}
    values: dict[str, str] = {}
    for name in case.required_credentials:
        try:
            check_credential_name(name)
        except ValueError as exc:
            raise EvalsError(f"credential {name!r}: {exc}", where=f"case {case.id}",
                             fix="remove it from the case's credentials") from None
        if name in operators:
            raise EvalsError(
                f"credential {name!r} is configured by the operator for the model or judge; a skill cannot name it",
                where=f"case {case.id}",
                fix="remove it from the case's credentials, or give the skill's service its own variable",
            )
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
