"""The shape of one decoy-pool skill, rendered by ``_decoy_pool_gen``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PoolSkill:
    name: str
    description: str
    tags: list[str]
    when: list[str]
    """Situations the skill is for (the SKILL.md 'When to use' list)."""
    script: str
    """File name under scripts/."""
    args: str
    """The Usage arguments: ``<placeholders>`` for input files, ``[...]`` optional."""
    limits: str
    code: str
    """The script's body (after the shebang and docstring)."""
    samples: dict[str, str | bytes] = field(default_factory=dict)
    """Sample files under samples/."""
    inputs: tuple[str, ...] = ()
    """The samples/ paths the Usage placeholders take, in order (default: every sample)."""

    @property
    def sample_inputs(self) -> tuple[str, ...]:
        return self.inputs or tuple(self.samples)
