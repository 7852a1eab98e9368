"""What a judge is, as configured (``conf/judge/*.yaml`` validates into this)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class JudgeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(default="heuristic", description="a key of judges.factory.JUDGE_KINDS")
    model: str | None = Field(default=None, description="litellm model string, e.g. openai/gpt-4o-mini")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp)")
    api_key_env: str | None = Field(default=None, description="name of the env var holding the key; never the key")
    temperature: float = 0.0
    max_concurrency: int = Field(default=4, ge=1)
    timeout_sec: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0, description="retries on rate limits and transient errors")
    cache_dir: str | None = Field(default=None, description="persistent reply cache; None disables it")

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        from aces_bench.judges.factory import JUDGE_KINDS  # the one list of judge kinds

        if kind not in JUDGE_KINDS:
            raise ValueError(f"unknown judge kind {kind!r}; use one of: {', '.join(sorted(JUDGE_KINDS))}")
        return kind
