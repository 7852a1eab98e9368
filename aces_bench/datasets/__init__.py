"""Creating and refining a skill's evaluation cases, and trigger evaluation.

Owns ``aces-bench dataset create|refine|check`` (``cli``, ``create``, ``refine``, with
offline ``templates``, LLM drafts through the judge layer in ``llm``, and the
``grounding``, ``scriptref`` (the documented script), ``fixtures`` (generated inputs with
known answers), ``decidable`` (the checks a draft rests on) and ``lift`` they rest on;
``measure`` scores the drafts for ``make bench``) and ``aces-bench trigger`` (``trigger``,
``trigger_cli``, ``trigger_run``, ``trigger_html``). The case model and its file formats
are ``aces_bench.cases``; import them from there.

May import: ``study`` and every layer below it (pyproject's layers contract); not ``ci``.
"""
