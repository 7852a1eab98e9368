"""Trial records -> graded trials: the host-side grading of a study (``grade``: graders,
judges, proof of load, first attempt, over a ``subject.TrialSubject``, labelled by
``labels.spec_labels``) and ``aces-bench grade`` for any Harbor job dir (``cli``, which
finds the trials with ``external`` and prints ``summary``).

May import: ``graders``, ``run`` (trial records, cost) and every layer below (``records``
among them).
"""
