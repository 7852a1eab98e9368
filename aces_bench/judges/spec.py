"""What a judge is, as configured (``conf/judge/*.yaml`` validates into this)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class JudgeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["heuristic", "litellm"] = "heuristic"
    model: str | None = Field(default=None, description="litellm model string, e.g. openai/gpt-4o-mini")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp)")
    api_key_env: str | None = Field(default=None, description="name of the env var holding the key; never the key")
    temperature: float = 0.0
    max_concurrency: int = Field(default=4, ge=1)
    timeout_sec: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0, description="retries on rate limits and transient errors")
    cache_dir: str | None = Field(default=None, description="persistent reply cache; None disables it")
