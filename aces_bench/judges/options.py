"""The one way a command line names a judge: ``--<prefix>-model``, ``-base-url``, ``-api-key-env``.

``aces-bench grade``, ``dataset``, ``trigger``, ``scan`` and ``ci`` each take a litellm
judge from three options (``ci`` spells them ``--suggest-*``). ``judge_from_options``
turns them into a ``JudgeSpec`` (or None: no judge asked for) with the same rule and the
same error everywhere: a base URL or key variable without a model is refused, not ignored.
``litellm_judge`` is the one JudgeSpec a model string gives (the trigger's proposer uses
it with the study's own model).
"""

from __future__ import annotations

from pydantic import ValidationError

from aces_bench.core.errors import ConfigError, from_validation
from aces_bench.judges.spec import JudgeSpec


def litellm_judge(model: str, *, base_url: str | None = None, api_key_env: str | None = None,
                  cache_dir: str | None = None, where: str = "judge.model", **fields) -> JudgeSpec:
    """A litellm JudgeSpec for ``model``; an invalid value is a ConfigError naming ``where``."""
    try:
        return JudgeSpec(kind="litellm", model=model, base_url=base_url, api_key_env=api_key_env,
                         cache_dir=cache_dir, **fields)
    except ValidationError as exc:
        raise from_validation(exc, where=where, prefix="judge") from None


def judge_from_options(model: str | None, base_url: str | None, api_key_env: str | None, *,
                       prefix: str = "--judge", cache_dir: str | None = None) -> JudgeSpec | None:
    """The judge ``--<prefix>-model/-base-url/-api-key-env`` name, or None when no model is given."""
    if model:
        return litellm_judge(model, base_url=base_url, api_key_env=api_key_env, cache_dir=cache_dir,
                             where=f"{prefix}-model {model}")
    if base_url or api_key_env:
        raise ConfigError(f"{prefix}-base-url/{prefix}-api-key-env need {prefix}-model", where=f"{prefix}-model",
                          fix=f"add {prefix}-model, e.g. openai/gpt-4o-mini or hosted_vllm/<id>, or drop them")
    return None
