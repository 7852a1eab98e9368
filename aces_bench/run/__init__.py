"""Running a planned study (checked already, by ``study.preflight``): Harbor jobs (``runner``), a round's job of one attempt, infrastructure reruns and the failure watch
(``attempts``; the rounds themselves are ``study.rounds``), one record per expected trial (``collect``), the cost estimate and cap
(``cost``), progress lines, offline defaults and
the baseline-reuse store (``reuse``).

May import: ``emitters``, ``config``, ``backends``, ``agents``, ``judges``, ``cases``,
``inputs``, ``core``.
"""
