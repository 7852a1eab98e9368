"""Skill CI (AEVAL-style): run only the skills a change touched, compare them with the
stored last good run, apply a promotion policy and write an evidence packet.

``aces-bench ci --since <ref>``; see ``cli.py`` for the flow and ``policy.py`` for the
policy file.

May import (pyproject's layers contract): ``study`` and every layer below it; not
``datasets``.
"""
