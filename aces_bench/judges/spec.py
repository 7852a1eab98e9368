"""What a judge is, as configured (``conf/judge/*.yaml`` validates into this)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aces_bench.judges.kinds import JUDGE_KINDS  # the one list of judge kinds

AGGREGATES = ("mean", "median")


class JudgeMember(BaseModel):
    """One judge of a panel: a litellm model (with its own endpoint and key variable), or the heuristic judge."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(description="litellm model string, or 'heuristic' for the offline judge")
    base_url: str | None = None
    api_key_env: str | None = None


class JudgeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(default="heuristic", description="a name in judges.kinds.JUDGE_KINDS")
    model: str | None = Field(default=None, description="litellm model string, e.g. openai/gpt-4o-mini")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp)")
    api_key_env: str | None = Field(default=None, description="name of the env var holding the key; never the key")
    temperature: float = 0.0
    max_concurrency: int = Field(default=4, ge=1)
    timeout_sec: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0, description="retries on rate limits and transient errors")
    cache_dir: str | None = Field(default=None, description="persistent reply cache; None disables it")
    models: tuple[JudgeMember, ...] = Field(
        default=(), description="a panel: several judges grade every judged metric (a model string, "
        "'heuristic', or {model, base_url, api_key_env}); cross-family models recommended")
    aggregate: Literal["mean", "median"] = Field(
        default="mean", description="how a panel's scores of one metric make the headline score")

    @field_validator("models", mode="before")
    @classmethod
    def _member_strings(cls, v: object) -> object:
        if isinstance(v, list):
            return [{"model": m} if isinstance(m, str) else m for m in v]
        return v

    def members(self) -> list[JudgeSpec]:
        """The panel's judges as single specs (this one's settings, each member's model); [] without a panel."""
        out = []
        for m in self.models:
            if m.model == "heuristic":
                out.append(JudgeSpec(kind="heuristic"))
                continue
            update = {"kind": "litellm", "model": m.model, "models": ()}
            if m.base_url is not None:
                update["base_url"] = m.base_url
            if m.api_key_env is not None:
                update["api_key_env"] = m.api_key_env
            out.append(self.model_copy(update=update))
        return out

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        if kind not in JUDGE_KINDS:
            raise ValueError(f"unknown judge kind {kind!r}; use one of: {', '.join(JUDGE_KINDS.names())}")
        return kind
