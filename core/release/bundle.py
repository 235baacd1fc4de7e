"""The release bundles: a public release and the curator's record, never mixed.

One writer, two zip files, for the dashboard and the command line alike:

* the **public release** (:data:`PUBLIC_BUNDLE_NAME`): ``synthetic.csv``, ``recipe.json``
  in its public form (no seed, no upload hash, no local directory:
  :meth:`core.release.ReleaseRecipe.public`), ``release.json``
  (:func:`core.release.public_report`: the mechanism's parameters, n, m and the guarantee
  that holds for every dataset of size n — or, where only an instance-level guarantee
  exists or a choice depends on the data, which guarantee it has and that its statement
  depends on the data) and ``README.txt`` (the same in words). Nothing in it is computed
  from the confidential data except the synthetic rows themselves and n.
* the **curator's record** (:data:`CURATOR_BUNDLE_NAME`): everything else — the curator's
  report with instance-level guarantees, k, singletons and the transforms as applied
  (bounds read off the data, clipped counts), the full recipe with its seed (replaying
  it reproduces ``synthetic.csv`` byte for byte), the summary table comparing the
  confidential data with the release, the quality report (SDMetrics-style scores of the
  release against the confidential data, docs/quality.md), category counts and figures that
  show the confidential data (SVG pictures, :func:`record_figures`: the record of one column
  weighs well under 1 MB). Every file name starts with ``CONFIDENTIAL_``; the first line of
  every text file is ``# CONFIDENTIAL — …`` (``<!-- CONFIDENTIAL — … -->`` in HTML and SVG),
  and JSON files have a top-level ``"CONFIDENTIAL"`` key first.

Everything confidential is computed from the frequency table (the k distinct rows and
their counts, ``result.prepared.table``), never from n rebuilt rows: summaries, category
counts and the quality report are weighted by the counts and equal those of the rows; the
figures draw at most :data:`FIGURE_ROWS` records (a seeded sample when n is larger).

Zip entries carry a fixed timestamp, so the same release gives the same bytes. Every CSV
goes through :func:`core.formatting.formula_safe` (a text cell a spreadsheet would run as a
formula gets a leading apostrophe; both READMEs say so). :func:`write_output` is the one way
a file is written (here and on the command line): never through a symbolic link, and
CONFIDENTIAL files readable by their owner only (mode 0600).
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
import weakref
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from .. import evaluation, plots
from ..evaluation import quality
from ..plots.static import overlay_svg
from ..formatting import CONFIDENTIAL_MARK, format_upper, formula_safe
from ..privacy import RECORDS_EXPOSED_WORDS
from .card import curator_card_html, release_card_html
from .gate import (ACKNOWLEDGEMENTS, AcknowledgementRequired, PublicationRefused, check_publication,
                   required_acknowledgements)
from .mechanisms import release_mechanism
from .recipe import ReleaseResult

__all__ = [
    "CURATOR_BUNDLE_NAME",
    "PUBLIC_BUNDLE_NAME",
    "ReleaseBundles",
    "build_bundles",
    "category_counts",
    "comparison_figures",
    "confidential_table",
    "curator_bundle",
    "gated_public_bundle",
    "overlay_figure",
    "public_bundle",
    "quality_report",
    "record_figures",
    "summary_table",
    "with_build_nonce",
    "with_ledger",
    "write_bundles",
    "write_output",
]

PUBLIC_BUNDLE_NAME = "public_release.zip"
CURATOR_BUNDLE_NAME = "CONFIDENTIAL_curator_record.zip"
SYNTHETIC_LABEL = "PYPP"            # the release's name in the summary table (as in the app)
_MARK_LINE = f"# {CONFIDENTIAL_MARK}"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)   # fixed: identical releases give identical zips
QUALITY_FILE = "CONFIDENTIAL_quality_report.csv"
#: Most confidential records drawn in a figure (a seeded sample beyond: a picture, not a statistic).
FIGURE_ROWS = 100_000
_FIGURE_SEED = 0
#: What the README files say about the formula guard of every CSV (core.formatting.formula_safe).
FORMULA_NOTE = ("Spreadsheet formulas: in the CSV files, a text cell or column name that starts with =, +, -, @, a tab "
                "or a carriage return (and is not a plain number such as -5) is written with a leading apostrophe "
                "('), so that a spreadsheet shows it as text instead of running it as a formula (the OWASP advice "
                "on CSV injection). Remove that first apostrophe to get the label as it was in the data. Numeric "
                "columns, negative numbers included, are written as numbers.")


@dataclass(frozen=True)
class ReleaseBundles:
    """The two artifacts of a release, as zip bytes (offer them as two labelled downloads)."""

    public: bytes | None   # None while the gate holds it back (core.release.gate)
    curator: bytes


# --------------------------------------------------------------------------- curator content
def overlay_figure(confidential: pd.DataFrame, synthetic: pd.DataFrame, column: str,
                   label: str = "synthetic (PYPP)"):
    """Histogram + KDE overlay of one numeric column, confidential vs synthetic (curator only).

    KDEs from :func:`core.evaluation.kde_curves` (binned, cost O(n + m), not O((n + m)·grid)) on
    :func:`core.evaluation.kde_grid`; a column with a single distinct value gets the histograms alone.
    """
    x, z = (_numbers(confidential[column]), _numbers(synthetic[column]))
    grid, kde = _kde_curves({"confidential": x, label: z})
    return plots.distribution_overlay_figure({"confidential": x, label: z}, kde_grid=grid, kde=kde,
                                             title=f"{column}: confidential vs synthetic", x_title=str(column))


def _kde_curves(samples: dict, first_counts=None):
    """The common grid and the KDE of each sample that has one (:func:`core.evaluation.kde_curves`),
    or ``(None, None)`` when no grid can be made."""
    values = list(samples.values())
    try:
        grid = evaluation.kde_grid(*values, first_counts=first_counts)
    except ValueError:  # a KDE needs two distinct values
        return None, None
    curves = evaluation.kde_curves(values, grid, first_counts=first_counts)
    kde = {label: curve for label, curve in zip(samples, curves) if curve is not None}
    return (grid, kde) if kde else (None, None)


def _numbers(column: pd.Series) -> np.ndarray:
    """The numbers of a numeric column as floats: a missing cell (the missing atom of a column
    released with ``missing='value'``, docs/mathematics.md §2.5) is no number and is left out."""
    x = pd.to_numeric(column).to_numpy(dtype=float, na_value=np.nan)
    return x[~np.isnan(x)]


def _numeric(result: ReleaseResult) -> list[str]:
    return [str(c.name) for c in result.prepared.column_info if c.kind == "numeric"]


_ORIGINAL_TABLES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def confidential_table(result: ReleaseResult) -> tuple[pd.DataFrame, np.ndarray]:
    """The confidential data as its distinct rows in original units and their counts.

    ``result.prepared.table`` mapped back by :meth:`~core.data.PreparedData.to_original`:
    k rows, not n, so agency-scale data never becomes n rows here. Mapped once per release
    (the summary, the quality report, the category counts and the figures read it; kept while
    the release is); do not modify the frame.
    """
    table = result.prepared.table
    rows = _ORIGINAL_TABLES.get(result)
    if rows is None:
        rows = _ORIGINAL_TABLES[result] = result.prepared.to_original(table.atoms)
    return rows, table.counts


def comparison_figures(result: ReleaseResult) -> dict:
    """``{"overlay_<column>": figure}`` for every numeric column (the app's overlays).

    The confidential side is every record when n ≤ :data:`FIGURE_ROWS`, otherwise a
    seeded sample of that many (:meth:`~core.data.PreparedData.sample`).
    """
    numeric = _numeric(result)
    if not numeric:
        return {}
    prepared = result.prepared
    shown = prepared.to_original(prepared.sample(FIGURE_ROWS, np.random.default_rng(_FIGURE_SEED)))
    return {f"overlay_{c}": overlay_figure(shown, result.synthetic, c) for c in numeric}


#: Bins of the curator record's histograms.
RECORD_BINS = 40


def record_figures(result: ReleaseResult) -> dict[str, str]:
    """``{"overlay_<column>": SVG text}`` for every numeric column: the curator record's
    overlays (:func:`core.plots.static.overlay_svg`).

    SVG, not a plotly page: a plotly page carries its own plotly.js (4.8 MB, 1.5 MB
    deflated — alone more than a one-column record should weigh), and one shared copy would
    not fit either; an SVG of the histograms and KDE curves is a few tens of kilobytes and
    opens in any browser, offline, with no script. The confidential side is every record,
    read off the frequency table with its counts (cost O(k + m), never the n rows): its
    histogram is exact, and its KDE is that of :func:`core.evaluation.kde_curves`.
    """
    rows, counts = confidential_table(result)
    out = {}
    for c in _numeric(result):
        values = pd.to_numeric(rows[c]).to_numpy(dtype=float, na_value=np.nan)
        keep = ~np.isnan(values)
        x, weights = values[keep], counts[keep]
        z = _numbers(result.synthetic[c])
        pooled = np.concatenate([x, z])
        if not pooled.size:
            continue
        lo, hi = float(pooled.min()), float(pooled.max())
        edges = np.linspace(lo, hi if hi > lo else lo + 1.0, RECORD_BINS + 1)
        bars = {}
        for label, sample, w in (("confidential", x, weights), (f"synthetic ({SYNTHETIC_LABEL})", z, None)):
            if sample.size:
                height, _ = np.histogram(sample, edges, weights=w)
                bars[label] = height / (height.sum() * np.diff(edges))
        grid, kde = _kde_curves(dict(zip(bars, (x, z))), first_counts=weights) if x.size and z.size else (None, None)
        out[f"overlay_{c}"] = overlay_svg(edges, bars, grid=grid, curves=kde, title=f"{c}: confidential vs synthetic",
                                          x_title=str(c))
    return out


def summary_table(result: ReleaseResult) -> pd.DataFrame | None:
    """:func:`core.evaluation.summary_table` of the confidential data and the release (numeric columns),
    from the frequency table with its counts."""
    numeric = _numeric(result)
    if not numeric:
        return None
    rows, counts = confidential_table(result)
    if not any(rows[c].isna().any() or result.synthetic[c].isna().any() for c in numeric):
        return evaluation.summary_table(rows, {SYNTHETIC_LABEL: result.synthetic}, columns=numeric, counts=counts)
    # A column with missing cells: each column's numbers, its missing cells left out on both sides.
    frames = []
    for c in numeric:
        keep = rows[c].notna().to_numpy()
        numbers = result.synthetic[[c]].dropna().astype(float)
        if keep.any() and len(numbers):
            frames.append(evaluation.summary_table(rows.loc[keep, [c]].astype(float), {SYNTHETIC_LABEL: numbers},
                                                   columns=[c], counts=counts[keep]))
    return pd.concat(frames, ignore_index=True) if frames else None


def category_counts(result: ReleaseResult) -> pd.DataFrame | None:
    """Counts of each value of each categorical column, confidential vs synthetic (most frequent first)."""
    frames = []
    rows, counts = confidential_table(result)
    for info in result.prepared.column_info:
        if info.kind != "categorical":
            continue
        # A missing cell is one more value (NaN: an empty cell in the CSV), counted like the others.
        labels = rows[info.name].astype(object)
        confidential = pd.Series(counts).groupby(labels.where(labels.notna(), np.nan).to_numpy(), sort=False,
                                                 dropna=False).sum()
        confidential = confidential.sort_values(ascending=False, kind="stable").rename("confidential")
        released = result.synthetic[info.name].astype(object)
        released = released.where(released.notna(), np.nan).value_counts(dropna=False).rename("synthetic")
        counted = pd.concat([confidential, released], axis=1)
        counted = counted.fillna(0).astype("int64").rename_axis("value").reset_index()
        counted.insert(0, "column", info.name)
        frames.append(counted)
    return pd.concat(frames, ignore_index=True) if frames else None


def quality_report(result: ReleaseResult) -> quality.QualityReport:
    """The quality report of the release against the confidential data (curator only).

    :func:`core.evaluation.quality.quality_report` of ``result.synthetic`` against the frequency
    table weighted by its counts (equal to the report of the n rows), with each
    column's kind from the prepared data.
    """
    rows, counts = confidential_table(result)
    kinds = {info.name: info.kind for info in result.prepared.column_info}
    bounds = {info.name: info.bounds for info in result.prepared.column_info if info.bounds is not None}
    return quality.quality_report(rows, result.synthetic, kinds, real_counts=counts, bounds=bounds)


# --------------------------------------------------------------------------- zips
def _zip(files: list[tuple[str, bytes]]) -> bytes:
    """The zip of ``files`` (name, bytes), with a fixed timestamp.

    Each entry carries the Unix mode ``unzip`` restores whatever the umask: 0600 (owner
    only) for a ``CONFIDENTIAL_`` file, as :func:`write_output` writes one, and 0644 for a
    public one (docs/serving.md §1).
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, payload in files:
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o600 if name.startswith("CONFIDENTIAL_") else 0o644) << 16
            # Level 1: a large synthetic CSV deflates in a third of the default's time for a
            # slightly larger file (the record's figures are small SVGs, record_figures).
            zf.writestr(info, payload, compresslevel=1)
    return buffer.getvalue()


def with_build_nonce(payload: bytes, nonce: str) -> bytes:
    """The zip ``payload`` with ``nonce`` as its zip comment (``build <nonce>``), nothing else changed.

    The app stamps every CONFIDENTIAL zip it serves with a fresh random nonce, so that two
    downloads of the same record are two files with two URLs in Streamlit's media store (whose
    URL is a hash of the content): a URL read from a log never answers again when the record is
    rebuilt (docs/serving.md §1). Entries, their bytes and their order are kept; unzip tools
    ignore the comment. The public release is never stamped (its bytes replay exactly), and the
    command line writes the record without one.

    Parameters
    ----------
    payload : bytes
        A zip archive (:func:`curator_bundle`).
    nonce : str
        Printable ASCII, at most 64 characters (the app passes ``secrets.token_hex(16)``).

    Raises
    ------
    ValueError
        ``payload`` is not a zip archive, or ``nonce`` is not short printable ASCII.
    """
    if not (isinstance(nonce, str) and 0 < len(nonce) <= 64 and nonce.isascii() and nonce.isprintable()):
        raise ValueError(f"nonce must be 1 to 64 printable ASCII characters, got {nonce!r}")
    buffer = io.BytesIO(payload)
    # checked first: mode "a" would append a new archive to bytes that are not one
    if not zipfile.is_zipfile(buffer):
        raise ValueError("payload must be a zip archive")
    # Mode "a" with only the comment changed rewrites the central directory alone: the
    # entries are neither read back nor compressed again.
    with zipfile.ZipFile(buffer, "a") as zf:
        zf.comment = f"build {nonce}".encode("ascii")
    return buffer.getvalue()


def _json(obj) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def _public_readme(report: dict) -> str:
    g = report["guarantee"]
    lines = [
        "bnp-synth public release",
        "",
        f"synthetic.csv  m = {report['release']['m']:,} synthetic rows of {', '.join(report['data']['columns'])}, "
        f"released with the {report['mechanism'].get('label') or report['mechanism']['description']} mechanism "
        f"({_mechanism_parameters(report)}) from a dataset of n = {report['data']['n']:,} records.",
        "recipe.json    every transform and parameter (without the seed, which stays secret).",
        "release.json   the same statements in machine-readable form.",
        "release_card.html  the same, for a disclosure-review board: verdict, guarantee and attack curves.",
        "",
        FORMULA_NOTE,
        "",
        f"Verdict: {report['strength']} — {report['strength_meaning']}",
        f"Guarantee ({g['scope']}, {g['kind']}): {g['description']}",
    ]
    if report.get("records_exposed") is not None and report["guarantee"]["kind"] != "pure":
        lines.append(f"n·δ = {format_upper(report['records_exposed'])}: {RECORDS_EXPOSED_WORDS}")
    if report["conditional_on"]:
        lines += ["", "CONDITIONAL ON choices the confidential data made, which no guarantee covers:"]
        lines += [f"- {c['title']}: {c['statement']} {c['consequence']}" for c in report["data_dependent_choices"]]
    if report.get("acknowledged"):
        lines += ["", "The curator acknowledged, before publishing:"]
        lines += [f"- {ACKNOWLEDGEMENTS[key]}" for key in report["acknowledged"]]
    lines += _ledger_lines(report)
    if report["warnings"]:
        lines += ["", "Warnings:"] + [f"- {text}" for text in report["warnings"]]
    lines += [""] + report["notes"]
    return "\n".join(lines) + "\n"


def _mechanism_parameters(report: dict) -> str:
    """The mechanism's public parameters in one line (``sigma = 0, theta = 2`` for PYPP; the
    reference and bins of another mechanism): the card's rows (:mod:`core.release.mechanisms`)."""
    rows = release_mechanism(report["mechanism"]["name"]).card_rows(report)
    words = {"σ": "sigma", "θ": "theta"}
    return ", ".join(f"{words.get(key, key)} = {value:g}" if isinstance(value, (int, float)) else f"{key}: {value}"
                     for key, value in rows if key not in ("regime", "what it is", "mechanism"))


def public_summary(report: dict) -> str:
    """A few lines for a terminal: the verdict and the global guarantee of the public report
    (public quantities only)."""
    g = report["guarantee"]
    lines = [f"verdict: {report['strength']} — {report['strength_meaning']}",
             f"guarantee: {g['description']}"]
    if report.get("records_exposed") is not None and report["guarantee"]["kind"] != "pure":
        lines.append(f"n·δ = {format_upper(report['records_exposed'])}: {RECORDS_EXPOSED_WORDS}")
    if report["conditional_on"]:
        lines.append("conditional on: " + "; ".join(report["conditional_on"]) + " (no guarantee covers these)")
    if report["attack"] is not None:
        a = report["attack"]
        lines.append("attack: membership advantage at most " + format_upper(a["advantage"]) + "; TPR at FPR "
                     + ", ".join(f"{fpr} ≤ {format_upper(tpr)}" for fpr, tpr in a["tpr_at_fpr"].items()))
    return "\n".join(lines)


def public_bundle(result: ReleaseResult, *, acknowledged=(), ledger: dict | None = None) -> bytes:
    """The public release zip: ``synthetic.csv``, ``recipe.json`` (public form),
    ``release.json`` (:func:`core.release.public_report`), ``release_card.html``
    (:func:`core.release.card.release_card_html`) and ``README.txt``.

    Behind the gate (:func:`core.release.gate.check_publication`): refused for a ``missed``
    verdict; a ``weak`` release and each data-dependent choice need ``acknowledged``, which
    ``release.json`` records. ``ledger`` is the release's block from the privacy ledger
    (:func:`core.ledger.ledger_block`), recorded as ``release.json``'s ``ledger`` (see
    :func:`with_ledger`)."""
    report = dict(result.public_report, acknowledged=check_publication(result.public_report, acknowledged))
    report = with_ledger(report, ledger)
    return _zip([
        ("README.txt", _public_readme(report).encode("utf-8")),
        ("synthetic.csv", result.synthetic_csv()),
        ("recipe.json", result.recipe.public().to_json().encode("utf-8")),
        ("release.json", _json(report)),
        ("release_card.html", release_card_html(report).encode("utf-8")),
    ])


def with_ledger(report: dict, ledger: dict | None) -> dict:
    """The public report with the privacy ledger's block of this release (docs/audit.md §8):
    ``ledger: {dataset, release_index, cumulative: {eps, delta}, budget: {eps, delta}}``
    (:func:`core.ledger.ledger_block`; public quantities only: the dataset's name as the
    curator chose it, the release's index and the composed spend). Without a ledger the report
    is returned unchanged (no ``ledger`` key)."""
    if ledger is None:
        return report
    if not isinstance(ledger, dict) or set(ledger) != {"dataset", "release_index", "cumulative", "budget"}:
        raise ValueError("ledger must be the block of core.ledger.ledger_block: {dataset, release_index, cumulative, "
                         f"budget}}, got {ledger!r}")
    return dict(report, ledger=ledger)


def _ledger_lines(report: dict) -> list[str]:
    """README lines of the ledger block (none without one)."""
    block = report.get("ledger")
    if not block:
        return []
    return ["", f"Privacy ledger: release {block['release_index']} of dataset {block['dataset']}; all its releases "
            f"together: eps = {format_upper(block['cumulative']['eps'])}, delta = "
            f"{format_upper(block['cumulative']['delta'])}, within the budget eps = {block['budget']['eps']:g}, "
            f"delta = {block['budget']['delta']:g}."]


def _marked_csv(frame: pd.DataFrame) -> bytes:
    return (_MARK_LINE + "\n" + formula_safe(frame).to_csv(index=False)).encode("utf-8")


def _figure_html(figure) -> str:
    if isinstance(figure, bytes):
        figure = figure.decode("utf-8")
    html = figure if isinstance(figure, str) else figure.to_html(include_plotlyjs=True, full_html=True)
    banner = ('<p style="background:#b00020;color:white;font:bold 14px sans-serif;padding:6px;margin:0">'
              f"{CONFIDENTIAL_MARK}</p>")
    html = re.sub(r"(<body[^>]*>)", lambda match: match.group(1) + banner, html, count=1)
    return f"<!-- {CONFIDENTIAL_MARK} -->\n{html}"


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(name)).strip("._") or "figure"


def curator_bundle(result: ReleaseResult, *, figures: Mapping | None = None,
                   summary: pd.DataFrame | None = None, report: quality.QualityReport | None = None,
                   acknowledged=()) -> bytes:
    """The curator's record zip (CONFIDENTIAL).

    Parameters
    ----------
    result : ReleaseResult
    figures : mapping name → SVG text, plotly Figure or HTML text, optional
        An SVG is written as ``CONFIDENTIAL_figure_<name>.svg`` (the app and the command line
        pass :func:`record_figures`: a few kB each, no plotly.js); a plotly figure or an HTML
        page as ``CONFIDENTIAL_figure_<name>.html`` (a plotly page embeds plotly.js, 1.5 MB
        deflated).
    summary : pandas.DataFrame, optional
        The summary table; computed with :func:`summary_table` when omitted.
    report : core.evaluation.quality.QualityReport, optional
        The quality report (``CONFIDENTIAL_quality_report.csv``); computed with
        :func:`quality_report` when omitted.
    acknowledged : iterable of str, optional
        The acknowledgements the curator gave (the keys of
        :data:`core.release.gate.ACKNOWLEDGEMENTS`): the record states those this release asks
        for, as its public files do (``acknowledged`` in ``CONFIDENTIAL_report.json`` and the
        curator card).
    """
    given = set(acknowledged or ())
    acks = sorted(key for key in required_acknowledgements(result.public_report) if key in given)   # as check_publication
    summary = summary_table(result) if summary is None else summary
    report = quality_report(result) if report is None else report
    counts = category_counts(result)
    files = [("CONFIDENTIAL_README.txt", _curator_readme(result, summary is not None, counts is not None,
                                                         sorted((figures or {}).items())).encode("utf-8")),
             ("CONFIDENTIAL_report.json", _json(dict(result.curator_report, acknowledged=acks))),
             ("CONFIDENTIAL_curator_card.html",
              curator_card_html(dict(result.public_report, acknowledged=acks), result.curator_report).encode("utf-8")),
             ("CONFIDENTIAL_recipe.json", result.recipe.to_json(confidential=True).encode("utf-8"))]
    if summary is not None:
        files.append(("CONFIDENTIAL_summary.csv", _marked_csv(summary)))
    files.append((QUALITY_FILE, report.to_csv(confidential=True)))
    if counts is not None:
        files.append(("CONFIDENTIAL_category_counts.csv", _marked_csv(counts)))
    used = set()
    for name, figure in (figures or {}).items():
        safe = _safe_name(name)
        while safe in used:
            safe += "_"
        used.add(safe)
        if _is_svg(figure):
            files.append((f"CONFIDENTIAL_figure_{safe}.svg", f"<!-- {CONFIDENTIAL_MARK} -->\n{figure}".encode("utf-8")))
        else:
            files.append((f"CONFIDENTIAL_figure_{safe}.html", _figure_html(figure).encode("utf-8")))
    return _zip(files)


def _is_svg(figure) -> bool:
    return isinstance(figure, str) and figure.lstrip().startswith("<svg")


def _curator_readme(result: ReleaseResult, has_summary: bool, has_counts: bool, figures: list) -> str:
    lines = [
        _MARK_LINE,
        "",
        "Curator's record of a bnp-synth release. Keep it with the confidential data; publish the public "
        f"release ({PUBLIC_BUNDLE_NAME}) instead.",
        "",
        "CONFIDENTIAL_report.json  every parameter, the seed, k, singletons, the transforms as applied and each "
        "guarantee (instance-level ones are statements about the confidential data).",
        "CONFIDENTIAL_curator_card.html  the release card with the instance-level facts and the count of unique "
        "records copied.",
        "CONFIDENTIAL_recipe.json  the full recipe with its seed: `python -m core release --recipe "
        "CONFIDENTIAL_recipe.json DATA.csv --out synthetic.csv` reproduces synthetic.csv byte for byte (DATA.csv "
        "is left out for a bundled sample; --use-recipe-source reads the file path the recipe names). --out is "
        "public, so it passes the gate: a weak release needs --accept-weak and each data-dependent choice its "
        "own --acknowledge KEY, as in the app.",
    ]
    if has_summary:
        lines.append("CONFIDENTIAL_summary.csv  mean, SD, quartiles, W1 and KDE-L2 of the confidential data and "
                     "the release (CSV after this line; read it with pandas.read_csv(..., comment='#')).")
    lines.append(f"{QUALITY_FILE}  quality report: KS / TV complement per column, correlation / contingency "
                 "similarity per pair of columns, the overall score and the yardsticks (the project's 3-way marginal "
                 "score and its subsample reference, unique exact match, row match share, logistic pMSE; NIST "
                 "SDNist's own k-marginal and pMSE), all computed against the confidential data (docs/quality.md, "
                 "docs/peers.md).")
    if has_counts:
        lines.append("CONFIDENTIAL_category_counts.csv  counts of each category, confidential vs synthetic.")
    lines += [f"CONFIDENTIAL_figure_{_safe_name(name)}.{'svg' if _is_svg(figure) else 'html'}  figure showing the "
              "confidential data" + (" (SVG: opens in any browser)" if _is_svg(figure) else "")
              for name, figure in figures]
    lines += ["", FORMULA_NOTE]
    if result.warnings:
        lines += ["", "Warnings:"] + [f"- {w}" for w in result.warnings]
    return "\n".join(lines) + "\n"


def build_bundles(result: ReleaseResult, *, figures: Mapping | None = None,
                  summary: pd.DataFrame | None = None, report: quality.QualityReport | None = None,
                  acknowledged=()) -> ReleaseBundles:
    """Both artifacts of a release (see :func:`gated_public_bundle`, :func:`curator_bundle`); the
    public one is ``None`` while the gate holds it back (missed, or not acknowledged)."""
    return ReleaseBundles(public=gated_public_bundle(result, acknowledged=acknowledged),
                          curator=curator_bundle(result, figures=figures, summary=summary, report=report,
                                                 acknowledged=acknowledged))


def gated_public_bundle(result: ReleaseResult, *, acknowledged=()) -> bytes | None:
    """:func:`public_bundle`, or ``None`` while the gate holds it back: a ``missed`` verdict,
    or a ``weak`` release (or bounds read off the data) not in ``acknowledged``
    (:func:`core.release.gate.check_publication`)."""
    try:
        return public_bundle(result, acknowledged=acknowledged)
    except (PublicationRefused, AcknowledgementRequired):
        return None


def write_bundles(result: ReleaseResult, *, public_path=None, curator_path=None, figures: Mapping | None = None,
                  summary: pd.DataFrame | None = None, report: quality.QualityReport | None = None,
                  acknowledged=()) -> None:
    """Write the public release and/or the curator's record to zip files.

    Raises
    ------
    ValueError
        Both paths are the same file (the two artifacts are never mixed).
    """
    if public_path is not None and curator_path is not None and Path(public_path).resolve() == Path(
            curator_path).resolve():
        raise ValueError(f"the public release and the curator's record must be two files, got the same path "
                         f"{str(public_path)!r} for both")
    if public_path is not None:
        write_output(public_path, public_bundle(result, acknowledged=acknowledged), confidential=False)
    if curator_path is not None:
        write_output(curator_path, curator_bundle(result, figures=figures, summary=summary, report=report,
                                                  acknowledged=acknowledged), confidential=True)


#: Mode of a CONFIDENTIAL file: read and write for its owner only.
CONFIDENTIAL_MODE = 0o600
_PUBLIC_MODE = 0o644   # before the umask, as any new file


def write_output(path, payload: bytes, *, confidential: bool) -> None:
    """Write ``payload`` to the file ``path``, never through a symbolic link.

    The file is opened with ``O_NOFOLLOW`` (a symbolic link planted where an output goes,
    e.g. pointing at the confidential data, is refused instead of followed) and must be a
    regular file. A ``confidential`` file is created with mode 0600, and an existing one is
    set to 0600 before anything is written into it; a public file gets the usual 0644
    (less the umask).

    Raises
    ------
    ValueError
        ``path`` is a symbolic link or not a regular file.
    OSError
        The file cannot be written (permissions, a missing directory, a full disk).
    """
    # O_NONBLOCK: a FIFO with no reader fails at once instead of hanging (no effect on a regular file).
    flags = (os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(path, flags, CONFIDENTIAL_MODE if confidential else _PUBLIC_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise ValueError(f"{str(path)!r} is a symbolic link: an output is never written through one (it "
                             "could point at the confidential data); remove it or give another file name") from None
        raise
    with os.fdopen(fd, "wb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{str(path)!r} is not a regular file: give the name of a file to write")
        if confidential:
            os.fchmod(fd, CONFIDENTIAL_MODE)   # an existing file keeps its mode on open: tighten it first
        handle.truncate(0)
        handle.write(payload)
