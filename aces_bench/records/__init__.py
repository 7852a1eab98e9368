"""What a study writes down: the trial records and the trials table (``trials``),
provenance (``provenance``) and a study's trials read back as one table (``study_data``,
behind ``aces_bench.load``).

May import: ``graders`` (metric results, redaction) and every layer below it.
"""
