"""An LLM judge over ``litellm.acompletion``: any provider, any OpenAI-compatible server.

Promises, per ``ask``:
- temperature from the spec (0 by default), the reply schema appended to the system text;
- a cache hit returns ``cached=True`` without a call;
- a reply that does not validate gets exactly one repair turn carrying the validation
  error; a second bad reply leaves the question unscored with both errors stated;
- rate limits (429) and transient server/connection errors are retried up to
  ``max_retries`` times with exponential backoff and seeded jitter;
- a timeout is not retried (it already cost ``timeout_sec``) and leaves the question
  unscored with the cause;
- at most ``max_concurrency`` calls are in flight per judge.
The API key is read from the environment variable *named* by the spec at call time and
is never stored on the judge.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from aces_bench.judges.base import JudgeOutcome
from aces_bench.judges.cache import JudgeCache, input_sha256
from aces_bench.judges.spec import JudgeSpec

T = TypeVar("T", bound=BaseModel)

# A keyless local server (vLLM, Ollama, llama.cpp) still needs some key in the request.
DUMMY_API_KEY = "not-needed"
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def _litellm():
    # Imported lazily: litellm costs ~2 s to import and most runs use the heuristic judge.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def schema_instruction(schema: type[BaseModel]) -> str:
    """The reply contract appended to every system text."""
    return (
        "Reply with only one JSON object, no prose and no code fence, that validates "
        "against this JSON Schema:\n"
        + json.dumps(schema.model_json_schema(), sort_keys=True)
    )


def parse_reply[T: BaseModel](text: str | None, schema: type[T]) -> T:
    """Validate a reply, tolerating a code fence or prose around one JSON object.

    Raises ValueError (or ValidationError, a subclass) with a message fit to send back.
    """
    if not text or not text.strip():
        raise ValueError("the reply was empty")
    candidates = [text.strip()]
    fenced = _FENCE.search(text)
    if fenced:
        candidates.append(fenced.group(1).strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    last: Exception | None = None
    for candidate in candidates:
        try:
            return schema.model_validate_json(candidate)
        except ValidationError as exc:
            last = exc
    assert last is not None
    raise last


def _short(exc: BaseException, limit: int = 300) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


class LiteLLMJudge:
    """The ``Judge`` protocol over litellm. See the module docstring for what it promises."""

    kind: Literal["llm", "heuristic"] = "llm"

    def __init__(
        self,
        spec: JudgeSpec,
        *,
        backoff_base: float = 1.0,
        backoff_cap: float = 30.0,
        seed: int = 0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        if not spec.model:
            raise ValueError("a litellm judge needs a model string")
        self.spec = spec
        self.model = spec.model
        self.label = f"litellm:{spec.model}"
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self._rng = random.Random(seed)
        self._sleep = sleep
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self.cache = JudgeCache(Path(spec.cache_dir)) if spec.cache_dir else None
        self.calls = 0
        """Requests sent to the provider (cache hits excluded); for tests and reports."""

    def backoff_delay(self, attempt: int) -> float:
        """Exponential delay before retry ``attempt`` (0-based), with up to 50% seeded jitter."""
        base = min(self.backoff_cap, self.backoff_base * (2**attempt))
        return base * (1.0 + 0.5 * self._rng.random())

    def _semaphore(self) -> asyncio.Semaphore:
        # One per event loop: a semaphore is bound to the loop that first waits on it,
        # and a judge may outlive one ``asyncio.run``.
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._semaphores:
            self._semaphores[loop_id] = asyncio.Semaphore(self.spec.max_concurrency)
        return self._semaphores[loop_id]

    def _api_key(self) -> str | None:
        if self.spec.api_key_env:
            return os.environ.get(self.spec.api_key_env)
        return DUMMY_API_KEY if self.spec.base_url else None

    async def ask(
        self,
        *,
        prompt_id: str,
        prompt_version: str,
        system: str,
        user: str,
        schema: type[T],
    ) -> JudgeOutcome[T]:
        """One validated reply for one prompt, or ``value=None`` with the cause."""
        input_hash = input_sha256(system, user, schema)
        key = {
            "model": self.model,
            "prompt_id": prompt_id,
            "prompt_version": prompt_version,
            "input_hash": input_hash,
        }
        if self.cache is not None:
            hit = self.cache.get(schema=schema, **key)
            if hit is not None:
                return JudgeOutcome[schema](value=hit, judge=self.label, cached=True)
        messages = [
            {"role": "system", "content": f"{system}\n\n{schema_instruction(schema)}"},
            {"role": "user", "content": user},
        ]
        async with self._semaphore():
            value, error = await self._validated(messages, schema)
        if value is not None and self.cache is not None:
            self.cache.put(value=value, **key)
        return JudgeOutcome[schema](value=value, error=error, judge=self.label)

    async def _validated(
        self, messages: list[dict[str, str]], schema: type[T]
    ) -> tuple[T | None, str | None]:
        text, error = await self._complete(messages)
        if error is not None:
            return None, error
        try:
            return parse_reply(text, schema), None
        except ValueError as first:
            first_error = _short(first, 600)
        repair = messages + [
            {"role": "assistant", "content": text or ""},
            {
                "role": "user",
                "content": "Your reply did not validate: "
                f"{first_error}\nReply again with only the corrected JSON object.",
            },
        ]
        text, error = await self._complete(repair)
        if error is not None:
            return (
                None,
                f"reply did not validate ({first_error}); the repair call failed: {error}",
            )
        try:
            return parse_reply(text, schema), None
        except ValueError as second:
            return None, (
                f"reply did not validate after one repair: first {first_error}; "
                f"then {_short(second, 600)}"
            )

    async def _complete(
        self, messages: list[dict[str, str]]
    ) -> tuple[str | None, str | None]:
        """The reply text, or an error string once retries are spent or the failure is final."""
        litellm = _litellm()
        transient = (
            litellm.RateLimitError,
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
            litellm.BadGatewayError,
            litellm.APIConnectionError,
        )
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.spec.temperature,
            "timeout": self.spec.timeout_sec,
            "num_retries": 0,  # retries are ours: one policy, observable, bounded by the spec
            "max_retries": 0,
        }
        if self.spec.base_url:
            kwargs["base_url"] = self.spec.base_url
        api_key = self._api_key()
        if api_key is not None:
            kwargs["api_key"] = api_key
        attempt = 0
        while True:
            self.calls += 1
            try:
                # The outer bound guards against a client that ignores its own timeout.
                response = await asyncio.wait_for(
                    litellm.acompletion(**kwargs), timeout=self.spec.timeout_sec + 5.0
                )
                return response.choices[0].message.content, None
            except (TimeoutError, litellm.Timeout) as exc:
                return (
                    None,
                    f"judge call timed out after {self.spec.timeout_sec:g}s ({_short(exc, 200)})",
                )
            except transient as exc:
                if attempt >= self.spec.max_retries:
                    return (
                        None,
                        f"judge call failed after {attempt + 1} attempt(s): {_short(exc)}",
                    )
                await self._sleep(self.backoff_delay(attempt))
                attempt += 1
            except Exception as exc:  # noqa: BLE001 - any other provider error is final, not a crash
                return None, f"judge call failed: {_short(exc)}"
