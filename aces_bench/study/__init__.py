"""One spec -> one report: a single study (``pipeline``), a designed study (``design``), a
sweep's report (``sweep``), the one round loop and its fixed and stop-on-pass schedules
(``rounds``), the sequential schedule (``sequential``), ``aces-bench plan`` (``plan``), what
a study prints (``console``), the lock on its output folder (``outlock``: one study per
folder at a time), and its provenance record filled in and written with its resolved spec,
both parts of its study record (``provenance``).

May import: every layer below it (``reports``, ``stats``, ``grading``, ``run``, ...);
``aces_bench.cli`` and ``aces_bench.ci`` import it.
"""
