"""The judge interface every LLM-judged metric and the Tier 2 rubric use."""

from __future__ import annotations

from typing import Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

T = TypeVar("T", bound=BaseModel)


class JudgeOutcome(BaseModel, Generic[T]):
    """A validated reply, or ``value=None`` with the error that left it unscored."""

    model_config = ConfigDict(frozen=True)

    value: T | None
    error: str | None = None
    judge: str
    cached: bool = False


class Judge(Protocol):
    label: str
    """Attribution written next to every score, e.g. ``litellm:openai/gpt-4o`` or ``heuristic``."""

    kind: Literal["llm", "heuristic"]

    async def ask(
        self, *, prompt_id: str, prompt_version: str, system: str, user: str, schema: type[T]
    ) -> JudgeOutcome[T]: ...
