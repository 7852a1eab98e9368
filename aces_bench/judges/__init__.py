"""Judges: one layer over LLM providers (litellm) and the offline heuristic judge."""
