"""One spec -> one report: a single study (``pipeline``), a designed study (``design``), a
sweep's report (``sweep``), the one round loop and its fixed and stop-on-pass schedules
(``rounds``), the sequential schedule (``sequential``), ``aces-bench plan`` (``plan``), what
a study prints (``console``), its provenance record filled in (``provenance``) and its
resolved spec and spend ledger recorded in its study record (``record``).

May import: every layer below it (``reports``, ``stats``, ``grading``, ``run``, ...);
``aces_bench.cli`` and ``aces_bench.ci`` import it.
"""
