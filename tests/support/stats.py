"""Synthetic trials tables built through the real ``TrialRow`` model."""

from __future__ import annotations

import numpy as np
import pandas as pd

from aces_bench.core.metrics import metric_names
from aces_bench.records.trials import TrialRow, table_columns


def trial(**over) -> dict:
    """One valid trial row (validated by TrialRow) with overrides."""
    base = {
        "run_id": "r1", "skill": "s1", "case_id": "c1", "case_kind": "explicit", "negative_control": False, "harness": "h1",
        "model": "m1", "workspace_mode": "isolation", "decoy_set": "none", "n_visible_skills": 1, "condition": "with_skill",
        "attempt": 0, "task_id": "t", "trial_name": "t__x", "status": "ok", "agent_label": "ref", "backend": "local",
        "has_trajectory": True,
    }
    base.update(over)
    return TrialRow(**base).model_dump()


def frame(rows: list[dict]) -> pd.DataFrame:
    out = pd.DataFrame(rows, columns=list(table_columns()))
    for col in ("reward", "composite", "outcome", "outcome_per_protocol", *(f"metric_{m}" for m in metric_names())):
        out[col] = pd.to_numeric(out[col], errors="coerce").astype(float)
    return out


def make_trials(*, skills=3, cases=4, attempts=2, harnesses=("h1",), models=("m1",), modes=("isolation",),
                seed=0, lift=0.2, unscored_rate=0.0) -> pd.DataFrame:
    """A balanced paired study with a true lift of about ``lift`` on every metric."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(skills):
        for c in range(cases):
            for a in range(attempts):
                for h in harnesses:
                    for m in models:
                        for mode in modes:
                            for cond in ("with_skill", "baseline"):
                                shift = lift if cond == "with_skill" else 0.0
                                vals = {f"metric_{k}": float(np.clip(rng.normal(0.5 + shift, 0.2), 0, 1)) for k in metric_names()}
                                status = "ok"
                                if rng.random() < unscored_rate:
                                    vals = {}
                                    status = "agent_error"
                                composite = float(np.mean(list(vals.values()))) if vals else None
                                reward = float(rng.random() < 0.4 + shift) if vals else None
                                rows.append(trial(skill=f"s{s}", case_id=f"c{c}", attempt=a, harness=h, model=m,
                                                  workspace_mode=mode, decoy_set="none" if mode == "isolation" else "d1",
                                                  condition=cond, status=status, reward=reward, composite=composite,
                                                  outcome=composite, outcome_per_protocol=composite,
                                                  has_trajectory=status == "ok", **vals))
    return frame(rows)


def cr2_matrix(y, g):
    """CR2 and Bell-McCaffrey df from the general matrix formulas (Pustejovsky & Tipton 2018,
    eq. 4 and the Satterthwaite df of their section 3; Imbens & Kolesar 2016), for any design
    matrix, written here with numpy: A_g = (I - H_gg)^(-1/2) by eigendecomposition."""
    y, g = np.asarray(y, float), np.asarray(g)
    n = y.size
    X = np.ones((n, 1))
    xtx_inv = np.linalg.inv(X.T @ X)
    H = X @ xtx_inv @ X.T
    e = y - H @ y
    meat = np.zeros((1, 1))
    cols = []
    for level in np.unique(g):
        idx = np.flatnonzero(g == level)
        w, v = np.linalg.eigh(np.eye(idx.size) - H[np.ix_(idx, idx)])
        A = v @ np.diag(w ** -0.5) @ v.T
        u = X[idx].T @ A @ e[idx]
        meat += np.outer(u, u)
        # column g of the df matrix: (I - H)[:, g] A_g X_g (X'X)^-1 c, c = 1
        cols.append((np.eye(n) - H)[:, idx] @ A @ X[idx] @ xtx_inv[:, 0])
    V = (xtx_inv @ meat @ xtx_inv)[0, 0]
    G_mat = np.column_stack(cols)
    lam = np.linalg.eigvalsh(G_mat.T @ G_mat)
    return V, lam.sum() ** 2 / (lam ** 2).sum()
