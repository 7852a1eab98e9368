"""What a study writes down and reads back, as data: the study record naming every file of
a study (``study``, ``study.json``), the trial records and the trials table (``trials``), a
metric's result and its evidence (``results``) with the self-correction section
(``self_correction``), provenance (``provenance``), a study's trials read back as one
table (``study_data``, behind ``aces_bench.load``), summary.json (``summary``: the
statistics and verdicts, with the types it holds in ``stats`` and ``gate``) and the
sequential ledger (``sequential``). Each file has one model, one writer and one reader here.

May import: ``core`` only (the layer just above it), plus third-party libraries. What a
record needs from a stage comes in as data: grading gives every graded trial its labels
(``aces_bench.grading.labels``), ``aces_bench.study.provenance`` fills in provenance from
the run spec, and ``trials.write_grades`` takes the masking of secret-like strings from
its caller (the patterns stay with the graders), as ``study.write_spec`` takes the spec
already masked (``aces_bench.study.provenance``).
"""
