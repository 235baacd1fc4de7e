"""The tables of a comparison (docs/mathematics.md §5, docs/peers.md §4): split from
:mod:`core.evaluation.compare`, which re-exports them.

* :func:`comparison_summary` averages the runs of :func:`core.evaluation.compare.run_comparison`
  per mechanism and column next to the confidential values, with each mechanism's seconds per
  release;
* :func:`mechanism_table` — one row per mechanism: guarantee, m, seconds per release and, when
  the comparison computed them, the yardsticks (:mod:`core.evaluation.yardsticks`) with the
  logistic pMSE next to its null reference and their ratio;
* :func:`quality_by_mechanism` — the quality report (:mod:`core.evaluation.quality`,
  docs/quality.md) of one release per mechanism, from the data's frequency table.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..formatting import format_upper
from ..mechanisms import distinct_rows
from ..validation import check_row_counts, check_unit_data
from .columns import ComparisonTable
from .quality import QualityReport, quality_report

__all__ = ["CALIBRATION_COLUMNS", "MECHANISM_COLUMNS", "PRIVACY_KNOBS", "YARDSTICK_COLUMNS", "calibration_table",
           "comparison_summary", "mechanism_table", "quality_by_mechanism"]

Progress = Callable[[float, str], None]

#: The yardsticks columns of :func:`core.evaluation.compare.run_comparison` (``yardsticks=True``)
#: and of its summary: the project's 3-way marginal score and its subsample reference, unique
#: exact match, row match share, the logistic pMSE with its null reference and their ratio
#: (comparable across m), and SDNist's own k-marginal and pMSE (docs/quality.md §9).
YARDSTICK_COLUMNS = ("marginal3", "marginal3_reference", "UEM", "row_match", "pMSE_logistic", "pMSE_null",
                     "pMSE_ratio", "SDNist_k_marginal", "SDNist_pMSE")
#: The leading columns of :func:`mechanism_table`.
MECHANISM_COLUMNS = ("label", "guarantee", "m", "seconds")
#: The columns of :func:`calibration_table`, as the Compare page shows them.
CALIBRATION_COLUMNS = ("label", "parameter", "value", "reason", "guarantee", "meets_target", "caveat")
#: Calibration knobs that are privacy numbers (a δ, a ρ): printed rounded up, as every δ is
#: (:func:`core.formatting.format_upper`), so the table never prints a δ below the guarantee's.
PRIVACY_KNOBS = ("delta_global", "delta_alpha", "rho")


def calibration_table(table: pd.DataFrame) -> pd.DataFrame:
    """The calibration table of :func:`core.evaluation.compare.calibrate` as shown to a reader.

    The knob values become text: a privacy number (:data:`PRIVACY_KNOBS`) rounded up to 3
    significant digits with :func:`core.formatting.format_upper` — the same digits as the
    guarantee column beside it, never a δ rounded down — every other value with up to 6
    significant digits. Columns :data:`CALIBRATION_COLUMNS`.
    """
    values = [format_upper(float(v), 3) if p in PRIVACY_KNOBS and math.isfinite(float(v)) and float(v) >= 0
              else f"{float(v):,.6g}" for p, v in zip(table["parameter"], table["value"])]
    return table[list(CALIBRATION_COLUMNS)].assign(value=values)


def _comparison_table(data, counts) -> tuple[np.ndarray, np.ndarray]:
    """The frequency table (rows on the unit box, counts) of records, of a given table, or of
    a :class:`ComparisonTable` (whose counts are used; ``counts`` must then be ``None``).

    Records are reduced once; a given table is kept as it is (its rows need not be
    distinct), so the comparison never builds the n rows.
    """
    if isinstance(data, ComparisonTable):
        if counts is not None:
            raise ValueError("counts: a ComparisonTable carries its own counts; do not pass counts with it")
        return check_unit_data(data.atoms), check_row_counts(data.counts, data.k, minimum=1)
    x = check_unit_data(data)
    if counts is None:
        return distinct_rows(x, None)
    return x, check_row_counts(counts, x.shape[0], minimum=1)


def comparison_summary(results: pd.DataFrame) -> pd.DataFrame:
    """Mean over runs of every metric per (mechanism, column), with the confidential row first.

    Parameters
    ----------
    results : pandas.DataFrame
        Output of :func:`run_comparison`.

    Returns
    -------
    pandas.DataFrame with columns ``mechanism, column, label, mean, sd, q1, median, q3,
    W1, W1_sd, TV, TV_sd, KDE_L2, KDE_L2_sd, runs, guarantee, m`` (TV: categorical columns),
    ``seconds`` (wall-clock seconds per release of the mechanism, from ``results.attrs["seconds"]``;
    NaN for the confidential rows) and the mean of each yardstick when ``results`` has them
    """
    if not isinstance(results, pd.DataFrame):
        raise ValueError(f"results must be the DataFrame of run_comparison, got {type(results).__name__}")
    needed = {"mechanism", "label", "column", "W1", "KDE_L2", "TV", "mean", "sd", "q1", "median", "q3", "guarantee"}
    missing = needed - set(results.columns)
    if missing:
        raise ValueError(f"results must come from run_comparison; missing columns {sorted(missing)}")
    grouped = results.groupby(["mechanism", "column"], sort=False)
    table = grouped.agg(label=("label", "first"), mean=("mean", "mean"), sd=("sd", "mean"),
                        q1=("q1", "mean"), median=("median", "mean"), q3=("q3", "mean"),
                        W1=("W1", "mean"), W1_sd=("W1", "std"), TV=("TV", "mean"), TV_sd=("TV", "std"),
                        KDE_L2=("KDE_L2", "mean"), KDE_L2_sd=("KDE_L2", "std"), runs=("W1", "size"),
                        guarantee=("guarantee", "first"),
                        **{name: (name, "first" if name == "m" else "mean")
                           for name in ("m",) + YARDSTICK_COLUMNS if name in results.columns}
                        ).reset_index()
    seconds = results.attrs.get("seconds")
    if seconds:
        # timing is not a metric of a run: it lives in attrs, so equal draws give equal frames
        table.insert(table.columns.get_loc("guarantee") + 1, "seconds", table["mechanism"].map(seconds).astype(float))
    confidential = results.attrs.get("confidential", {})
    categorical = set(results.loc[results["TV"].notna(), "column"])
    rows = [{"mechanism": "confidential", "label": "confidential data", "column": col, **summ,
             "W1": math.nan if col in categorical else 0.0, "W1_sd": math.nan if col in categorical else 0.0,
             "KDE_L2": math.nan if col in categorical else 0.0, "KDE_L2_sd": math.nan if col in categorical else 0.0,
             "TV": 0.0 if col in categorical else math.nan, "TV_sd": 0.0 if col in categorical else math.nan,
             "runs": 0, "guarantee": "", "m": None}
            for col, summ in confidential.items()]
    if not rows:
        return table
    frame = pd.DataFrame(rows).reindex(columns=table.columns)
    if "m" in table:
        table = table.astype({"m": object})
    return pd.concat([frame, table], ignore_index=True)


def mechanism_table(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per mechanism of a comparison: ``label, guarantee, m, seconds`` and the mean of
    every yardstick the comparison computed (:data:`YARDSTICK_COLUMNS`).

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`comparison_summary` of a comparison.

    Returns
    -------
    pandas.DataFrame
        ``seconds`` is NaN when the results carried no timing.
    """
    if not isinstance(summary, pd.DataFrame) or not {"mechanism", "label", "guarantee"} <= set(summary.columns):
        raise ValueError("summary must be comparison_summary of a comparison")
    rows = summary[summary["mechanism"] != "confidential"].drop_duplicates("mechanism").reset_index(drop=True)
    out = pd.DataFrame({"label": rows["label"], "guarantee": rows["guarantee"],
                        "m": rows["m"] if "m" in rows else None,
                        "seconds": rows["seconds"] if "seconds" in rows else math.nan})
    for name in YARDSTICK_COLUMNS:
        if name in rows.columns:
            out[name] = rows[name].to_numpy()
    return out


def quality_by_mechanism(atoms, counts, releases, *, columns: Sequence[str] | None = None,
                         progress: Progress | None = None) -> tuple[pd.DataFrame, dict[str, QualityReport]]:
    """Quality report of one release per mechanism against the data (docs/quality.md).

    Per numeric column (on [0, 1]) the KS complement, per categorical column the TV
    complement, per pair the correlation or contingency similarity; computed from the
    frequency table (the k distinct rows and their counts,
    :func:`core.evaluation.quality.quality_report` with ``real_counts``), so the cost grows
    with k and m, not with n.

    Parameters
    ----------
    atoms : ComparisonTable, or array_like, shape (k,) or (k, d)
        The distinct rows of the data on the unit box (every column numeric), or their
        ComparisonTable: its categorical columns, in the data and in every release, are
        then read as their category labels (a new label as ``OTHER_CATEGORY``, which the
        data never hold, so the TV is that of the labels themselves).
    counts : array_like of int ≥ 1, shape (k,), or None with a ComparisonTable
    releases : mapping label → array_like, shape (m,) or (m, d)
        One release per mechanism (e.g. the Compare page's).
    columns : sequence of str, optional
        Column names (default: the table's, else ``x0, x1, …``).
    progress : callable ``progress(fraction, message)``, optional

    Returns
    -------
    table : pandas.DataFrame
        One row per mechanism: ``label, overall, column_shapes, column_pair_trends`` and
        one column per data column with its KS or TV complement.
    reports : dict label → QualityReport
    """
    table = atoms if isinstance(atoms, ComparisonTable) else None
    if table is not None:
        x, counts = _comparison_table(table, None)
        columns = table.names if columns is None else columns
    else:
        x = np.asarray(atoms, dtype=float)
    x = x.reshape(x.shape[0], -1)
    d = x.shape[1]
    names = [f"x{j}" for j in range(d)] if columns is None else [str(c) for c in columns]
    if len(names) != d:
        raise ValueError(f"columns must name the {d} columns, got {len(names)} names")
    kinds = {name: ("numeric" if table is None else table.columns[j].kind) for j, name in enumerate(names)}

    def frame(rows: np.ndarray) -> pd.DataFrame:
        out = pd.DataFrame(rows, columns=names)
        for j, name in enumerate(names):
            if kinds[name] == "categorical":
                out[name] = table.columns[j].category_labels(rows[:, j])
        return out

    real = frame(x)
    report_progress = progress if progress is not None else (lambda fraction, message: None)
    rows, reports = [], {}
    for i, (label, z) in enumerate(releases.items()):
        report_progress(i / max(1, len(releases)), f"quality report: {label}")
        zz = np.asarray(z, dtype=float)
        zz = zz.reshape(zz.shape[0], -1)
        if zz.shape[1] != d:
            raise ValueError(f"release {label!r} has {zz.shape[1]} columns, the data has {d}")
        rep = quality_report(real, frame(zz), kinds, real_counts=counts)
        reports[str(label)] = rep
        rows.append({"label": str(label), "overall": rep.overall, "column_shapes": rep.column_shapes,
                     "column_pair_trends": rep.column_pair_trends,
                     **dict(zip(rep.columns["column"], rep.columns["score"]))})
    report_progress(1.0, "done")
    return pd.DataFrame(rows, columns=["label", "overall", "column_shapes", "column_pair_trends", *names]), reports
