"""Judges: one layer over LLM providers (litellm) and the offline heuristic judge.

May import (pyproject's layers contract): ``cases`` and every layer below it; not its
siblings ``agents`` and ``backends``.
"""
