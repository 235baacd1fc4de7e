"""The release card: one self-contained page a disclosure-review board reads (docs/verdicts.md §4).

``release_card.html`` goes into the public bundle: the mechanism and its parameters, the
verdict and what it means, the composed global δ(ε) and the trade-off curve of the best
membership test (inline SVG, no script, no network request), the attack terms, the transforms
and every data-dependent choice — public quantities only, read from the public report. The
curator card (``CONFIDENTIAL_curator_card.html``, curator record only) adds the instance-level
facts of the curator report. Every text is HTML-escaped: column and category names are the
user's.
"""
from __future__ import annotations

from html import escape

import numpy as np

from ..formatting import CONFIDENTIAL_MARK, format_upper
from ..privacy import RECORDS_EXPOSED_WORDS, ReleaseSpec, copy_scale
from .gate import ACKNOWLEDGEMENTS
from .mechanisms import release_mechanism

__all__ = ["CARD_EPS_GRID", "curator_card_html", "release_card_html"]

#: ε at which the card draws the composed global δ(ε).
CARD_EPS_GRID = np.geomspace(0.05, 12.0, 60)
_ALPHA_GRID = np.linspace(0.0, 1.0, 101)
_COLOURS = {"pure": "#1b7a3a", "strong": "#1b7a3a", "weak": "#a66300", "missed": "#b00020"}
#: A pure or strong verdict conditional on a data-dependent choice is not shown green (docs/verdicts.md §1).
_CONDITIONAL_COLOUR = "#a66300"
_STYLE = ("body{font:15px/1.45 system-ui,sans-serif;max-width:860px;margin:2em auto;color:#222}"
          "h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}table{border-collapse:collapse}"
          "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}.verdict{color:white;padding:10px;"
          "border-radius:6px}.mark{background:#b00020;color:white;font-weight:bold;padding:6px}"
          "svg text{font:11px sans-serif}")


def _svg_chart(x: np.ndarray, y: np.ndarray, *, title: str, x_label: str, y_label: str, log_x: bool = False,
               width: int = 560, height: int = 260) -> str:
    """A line chart as inline SVG (x, y finite; y in [0, 1])."""
    left, right, top, bottom = 56, 12, 26, 38
    tx = np.log10(x) if log_x else x
    x0, x1 = float(tx.min()), float(tx.max())
    px = left + (tx - x0) / ((x1 - x0) or 1.0) * (width - left - right)
    py = top + (1.0 - np.clip(y, 0.0, 1.0)) * (height - top - bottom)
    points = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(px, py))
    ticks = []
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        yy = top + (1.0 - v) * (height - top - bottom)
        ticks.append(f'<line x1="{left}" x2="{width - right}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#eee"/>'
                     f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{v:g}</text>')
    for v in (x.min(), np.sqrt(x.min() * x.max()) if log_x else (x.min() + x.max()) / 2, x.max()):
        t = np.log10(v) if log_x else v
        xx = left + (t - x0) / ((x1 - x0) or 1.0) * (width - left - right)
        ticks.append(f'<text x="{xx:.1f}" y="{height - bottom + 14}" text-anchor="middle">{v:.3g}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
            f'aria-label="{escape(title)}"><text x="{left}" y="16" font-weight="bold">{escape(title)}</text>'
            + "".join(ticks)
            + f'<polyline fill="none" stroke="#1f4e9e" stroke-width="2" points="{points}"/>'
            f'<text x="{(left + width - right) / 2:.0f}" y="{height - 6}" text-anchor="middle">{escape(x_label)}'
            f'</text><text x="12" y="{(top + height - bottom) / 2:.0f}" transform="rotate(-90 12 '
            f'{(top + height - bottom) / 2:.0f})" text-anchor="middle">{escape(y_label)}</text></svg>')


def _rows(pairs) -> str:
    return "<table>" + "".join(f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>"
                               for k, v in pairs) + "</table>"


def _items(texts) -> str:
    texts = list(texts)
    return "<ul>" + "".join(f"<li>{escape(str(t))}</li>" for t in texts) + "</ul>" if texts else "<p>None.</p>"


#: Public categories listed on the card per column; recipe.json lists them all.
CARD_MAX_CATEGORIES = 12


def _bounds_text(column: dict) -> str:
    if column["kind"] != "numeric":
        return "—"
    if column["bounds"] is None:
        return "read off the confidential data (not private; see the choices below)"
    low, high = column["bounds"]
    text = f"[{low:.15g}, {high:.15g}]" + (" (log scale)" if column["log"] else "")
    if column.get("grid") is not None:
        text += f"; public grid, step {column['grid']:.15g}{' in log units' if column['log'] else ''}"
    return text


def _rounding_text(column: dict) -> str:
    if column["kind"] != "numeric":
        return "—"
    if column.get("grid") is not None:
        return "to the public grid (see bounds)"
    if column.get("precision_from_data"):
        return "new values to the precision of the confidential records (read off the data; see the choices below)"
    if column["decimals"] is None:
        return "none: new values at full precision"
    decimals = column["decimals"]
    if decimals <= 0:
        return f"to multiples of {10 ** -decimals:,}"
    return f"to {decimals} decimal{'s' if decimals != 1 else ''} ({10.0 ** -decimals:.{decimals}f})"


def _categories_text(column: dict) -> str:
    categories = column.get("categories")
    if column["kind"] == "numeric":
        return "—"
    if categories is None:
        return "those seen in the confidential data (not public; new ones are drawn as new_category_j)"
    shown = ", ".join(map(str, categories[:CARD_MAX_CATEGORIES]))
    more = len(categories) - CARD_MAX_CATEGORIES
    return f"{len(categories)} public: {shown}" + (f", … ({more} more in recipe.json)" if more > 0 else "")


_MISSING_WORDS = {None: "none allowed", "value": "a value of its own (released as an empty cell)",
                  "drop": "records with one dropped (n counted after dropping)"}


def _column_table(columns: list[dict]) -> str:
    """One row per released column: kind, public bounds, rounding, scaling, categories."""
    if not columns:
        return "<p>See recipe.json.</p>"
    head = "".join(f"<th>{h}</th>" for h in ("column", "kind", "bounds", "rounding", "scaled to [0, 1]",
                                             "categories", "missing values"))
    rows = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in (
        c["name"], c["kind"], _bounds_text(c), _rounding_text(c),
        ("yes" if c["scale"] else "no") if c["kind"] == "numeric" else "—", _categories_text(c),
        _MISSING_WORDS[c.get("missing")])) + "</tr>"
        for c in columns)
    return f"<table><tr>{head}</tr>{rows}</table>"


def _title(mech: dict, spec) -> str:
    """What the card is of: a peer's label, or PYPP with its regime (a σ < 0 release is a
    Dirichlet–multinomial over a public domain, not the Dirichlet process)."""
    if mech.get("label"):
        return mech["label"]
    regime = getattr(spec, "regime", None)
    return f"{mech['description']}: {regime.label}" if regime is not None else mech["description"]


def _body(report: dict) -> list[str]:
    mechanism = release_mechanism(report["mechanism"]["name"])
    spec = mechanism.spec_of_report(report)
    guarantee = mechanism.guarantee_of(spec)
    strength = report["strength"]
    mech, data = report["mechanism"], report["data"]
    conditional = report.get("conditional_on") or []
    colour = _CONDITIONAL_COLOUR if conditional and strength in ("pure", "strong") else _COLOURS[strength]
    parts = [
        f"<h1>Release card — {escape(_title(mech, spec))}</h1>",
        f'<p class="verdict" style="background:{colour}"><b>Verdict: {escape(strength)}'
        f"{' (conditional)' if conditional and strength != 'missed' else ''}</b> — "
        f"{escape(report['strength_meaning'])}</p>",
    ]
    if conditional:
        parts.append('<div class="conditional"><b>Conditional on choices the confidential data made, which no '
                     "guarantee covers:</b>" + _items(conditional) + "Each needs the curator's acknowledgement before "
                     "publication; those given are listed under “Acknowledged before publication”.</div>")
    parts.append(f"<p>{escape(report['guarantee']['description'])}</p>")
    if isinstance(spec, ReleaseSpec) and spec.mechanism == "pypp" and spec.sigma == 0:
        # the scale of copying, public at σ = 0 (n is public): docs/verdicts.md §2.1
        parts.append(f"<p><b>Scale of copying:</b> {escape(copy_scale(spec.m, spec.n, spec.theta).words)}</p>")
    parts += [
        "<h2>Mechanism and parameters</h2>",
        _rows([*mechanism.card_rows(report), ("n (records)", data["n"]),
               ("m (released rows)", report["release"]["m"]), ("m chosen by", report["release"]["m_chosen_by"]),
               ("target ε", report["privacy_target"]["eps"]),
               ("target δ", "none given (pure ε-DP: δ = 0)" if report["privacy_target"]["delta"] is None
                else format_upper(report["privacy_target"]["delta"])),
               ("releases planned (composed)", report["releases_planned"]),
               ("n·δ (global, composed)", "—" if report.get("records_exposed") is None
                else f"{format_upper(report['records_exposed'])}: {RECORDS_EXPOSED_WORDS}"),
               ("columns", ", ".join(map(str, data["columns"]))), ("transforms", data["coarsening_description"])]),
        "<h2>Columns as released (the public recipe)</h2>",
        _column_table(data.get("column_transforms") or []),
        "<h2>What an attacker can do</h2>",
    ]
    attack = report["attack"]
    if attack is None:
        parts.append("<p>No global guarantee is known, so no bound on an attacker is stated.</p>")
    else:
        parts.append(_rows([("largest membership advantage (TPR − FPR)", format_upper(attack["advantage"]))]
                           + [(f"true positive rate at false positive rate {fpr}", "≤ " + format_upper(tpr))
                              for fpr, tpr in attack["tpr_at_fpr"].items()]))
        parts.append(f"<p>{escape(attack['source'])}.</p>")
    curve = mechanism.delta_curve(spec, CARD_EPS_GRID)
    if curve is not None:
        parts.append(_svg_chart(CARD_EPS_GRID, curve, title="global δ(ε) of the planned releases (rounded up)",
                                x_label="ε", y_label="δ", log_x=True))
    if guarantee.attack is not None and guarantee.attack.curve:   # the (ε, δ) terms of a peer carry no curve
        parts.append(_svg_chart(_ALPHA_GRID, guarantee.attack.tradeoff(_ALPHA_GRID),
                                title="trade-off of the best membership test", x_label="false positive rate α",
                                y_label="false negative rate f(α)"))
    parts += _ledger_section(report)
    parts += ["<h2>Choices that depend on the data</h2>",
              _items(f"{c['title']}: {c['statement']} {c['consequence']}" for c in report["data_dependent_choices"]),
              "<h2>Acknowledged before publication</h2>",
              _items(ACKNOWLEDGEMENTS[key] for key in report.get("acknowledged", [])),
              "<h2>Warnings</h2>", _items(report["warnings"]), "<h2>Notes</h2>", _items(report["notes"]),
              f"<p>{escape(report['tool'])} {escape(str(report['version']))}</p>"]
    return parts


def _ledger_section(report: dict) -> list[str]:
    """The privacy ledger's block (docs/audit.md §8): this release's index among the dataset's
    releases and what they spent together, against the budget; nothing without a ledger."""
    block = report.get("ledger")
    if not block:
        return []
    return ["<h2>Privacy ledger</h2>",
            _rows([("dataset", block["dataset"]), ("release", f"number {block['release_index']}"),
                   ("all its releases together (composed)", f"ε = {format_upper(block['cumulative']['eps'])}, "
                                                            f"δ = {format_upper(block['cumulative']['delta'])}"),
                   ("budget", f"ε = {block['budget']['eps']:g}, δ = {block['budget']['delta']:g}")]),
            "<p>Every public release of this dataset is charged to one budget; σ = 0 releases compose exactly "
            "(δ = 1 − Π(1 − T₁)), pure ε adds (docs/audit.md §8 of bnp-synth).</p>"]


def _page(title: str, parts: list[str]) -> str:
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{_STYLE}</style></head><body>" + "\n".join(parts) + "</body></html>\n")


def release_card_html(public_report: dict) -> str:
    """The public release card (self-contained HTML) of a public report
    (:func:`core.release.public_report`, with its ``acknowledged``)."""
    return _page("Release card", _body(public_report))


def curator_card_html(public_report: dict, curator_report: dict) -> str:
    """The CONFIDENTIAL curator card: the release card plus the instance-level facts."""
    verbatim = curator_report.get("verbatim") or {}
    extra = ["<h2>Instance-level facts (this dataset only; not private; never the verdict)</h2>",
             _items(g["description"] for g in curator_report.get("guarantees", [])),
             _rows([("records whose value is unique", verbatim.get("unique_records_in_data")),
                    ("unique records copied: expected per release", verbatim.get("expected_unique_records_copied_per_release")),
                    ("unique records copied: in this release", verbatim.get("unique_records_copied")),
                    ("rows equal to a unique record: expected per release", verbatim.get("expected_unique_rows_copied")),
                    ("rows equal to a unique record: in this release", verbatim.get("unique_rows_copied")),
                    ("unique records expected in at least one of the planned releases",
                     verbatim.get("expected_unique_records_copied"))])]
    mark = f'<p class="mark">{escape(CONFIDENTIAL_MARK)}</p>'
    return _page("CONFIDENTIAL curator card", [mark, *_body(public_report), *extra, mark])
