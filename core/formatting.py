"""Numbers shown to a user, rounded to the safe side (docs/accuracy.md, "Printed numbers").

:func:`format_upper` prints every δ and every ε threshold of the project — on the pages, in
the reports and public files, on the command line — rounded *up*, so that a printed
privacy number is never smaller than the computed one. It lives here, without plotly, so
that reports and the command line do not import the plotting stack. :data:`CONFIDENTIAL_MARK`
is the one wording that marks every curator-only file and figure.

:func:`formula_safe` is the one guard of every CSV the project writes (the public
``synthetic.csv``, the curator's tables, the app's downloads, the command line's ``--out``):
a text cell that a spreadsheet would run as a formula is written as text instead.
"""

from __future__ import annotations

import math
import numbers
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext

import numpy as np
import pandas as pd

from .validation import check_integer

__all__ = ["CONFIDENTIAL_MARK", "FORMULA_TRIGGERS", "certified_eps_note", "composed_eps_note", "format_certified_eps",
           "format_composed", "format_eps", "format_lower", "format_risk", "format_risk_interval", "format_upper", "formula_safe",
           "neutralise_formula", "risk_note"]

#: Heads every curator-only file (the curator report, its figures and tables).
CONFIDENTIAL_MARK = ("CONFIDENTIAL — curator record of a bnp-synth release: it states facts about the "
                     "confidential data that no privacy guarantee covers. Do not publish it.")


def format_upper(value, digits: int = 3) -> str:
    """Format a privacy number (a δ or an ε threshold) rounded *up* to ``digits`` significant digits.

    Privacy numbers shown to a user are rounded toward the conservative side: the printed
    number, read back, is never smaller than ``value`` (``float(text) >= value``), and it
    exceeds ``value`` by at most one unit in its last printed digit. The rounding is
    exact: ``decimal.Decimal(value)`` is the exact binary value of the float (subnormals
    included), rounded with ``ROUND_CEILING`` at the requested digit. The style is that of
    ``format(x, "g")``: fixed notation for exponents in ``[-4, digits)``, scientific
    otherwise, trailing zeros dropped. When the shortest decimal that reads back as the same
    float (``repr``) has at most ``digits`` digits, it is printed as is (``0.1`` stays
    ``"0.1"``). Exact zeros print ``"0"``, ``+inf`` prints ``"inf"``.

    Use it for every δ and every ε threshold ("pure ε-DP for ε ≥ …"); both are safe when
    rounded up.

    Parameters
    ----------
    value : float in [0, ∞]
    digits : int in [1, 17]

    Returns
    -------
    str
        For example ``format_upper(0.0123401) == "0.0124"``,
        ``format_upper(3.1e-9) == "3.1e-09"`` and ``format_upper(8.29344e-319) == "8.294e-319"``
        with ``digits=4``.

    Raises
    ------
    TypeError
        ``value`` is not a real number.
    ValueError
        ``value`` is negative or NaN, or ``digits`` is out of range.
    """
    return _format_rounded(value, digits, ROUND_CEILING)


def format_lower(value, digits: int = 3) -> str:
    """A lower bound (an audit's certified ε) rounded *down* to ``digits`` significant digits.

    The mirror of :func:`format_upper` — same parameters, style, exactness and errors, with
    ``ROUND_FLOOR`` on the exact binary value: the printed number, read back, is never larger
    than ``value``, so a printed certificate never claims more than the audit showed. For
    example ``format_lower(0.0123499) == "0.0123"`` and ``format_lower(2.0) == "2"``.
    """
    return _format_rounded(value, digits, ROUND_FLOOR)


def _format_rounded(value, digits: int, rounding: str) -> str:
    """:func:`format_upper` (``ROUND_CEILING``) or :func:`format_lower` (``ROUND_FLOOR``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"value must be a real number, got {type(value).__name__}")
    value = float(value)
    digits = check_integer("digits", digits, minimum=1, maximum=17)
    if math.isnan(value) or value < 0:
        raise ValueError(f"value must be in [0, ∞] (a δ or an ε threshold), got {value!r}")
    if value == math.inf:
        return "inf"
    if value == 0:
        return "0"
    with localcontext() as ctx:
        ctx.prec = 60
        # The shortest decimal that reads back as this very float (repr) is used when it fits
        # in ``digits``: 0.1 prints "0.1", not "0.101" (the float 0.1 is 0.1000000000000000055…).
        shortest = Decimal(repr(value)).normalize()
        if len(shortest.as_tuple().digits) <= digits:
            rounded = shortest
        else:
            exact = Decimal(value)
            rounded = exact.quantize(Decimal(1).scaleb(exact.adjusted() - digits + 1), rounding=rounding)
            rounded = rounded.normalize()
    exponent = rounded.adjusted()
    if -4 <= exponent < digits:
        text = format(rounded, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa = rounded.scaleb(-exponent)
    head = format(mantissa, "f")
    head = head.rstrip("0").rstrip(".") if "." in head else head
    return f"{head}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"


# ----------------------------------------------------------------------------- ε and audit numbers
def format_eps(value, digits: int = 3) -> str:
    """An ε of a guarantee as a user reads it: ``"0"``, ``"∞"``, or rounded *up* (:func:`format_upper`).

    A guarantee's ε is safe when rounded up. The two ends get words of their own on the
    page (:func:`composed_eps_note`); here ``+inf`` is written ``"∞"``, never ``"inf"``.
    Parameters and errors as :func:`format_upper`.
    """
    text = format_upper(value, digits)
    return "∞" if text == "inf" else text


def composed_eps_note(value, delta, releases: int = 1) -> str:
    """Plain words for a total ε of ``releases`` releases at ``delta`` that is 0 or ∞ (docs/audit.md §4).

    The total ε is the smallest ε with δ(ε) ≤ ``delta`` after composing the releases'
    privacy loss distributions. It is

    * ``∞`` when no finite ε reaches ``delta``: with probability above δ the privacy loss is
      infinite — some event (a value seen once in the data copied into the release) happens
      under one dataset and never under its neighbour;
    * ``0`` when δ(0) — the total variation between the release's laws on neighbouring
      datasets — is already at most ``delta``: no test tells them apart beyond δ.

    Parameters
    ----------
    value : float in [0, ∞]
        The total ε.
    delta : float in (0, 1)
    releases : int ≥ 1

    Returns
    -------
    str
        One or two sentences, or ``""`` for a finite positive ε (nothing to explain).
    """
    releases = check_integer("releases", releases, minimum=1)
    value = float(value)
    after = "one release" if releases == 1 else f"{releases} releases"
    if value == math.inf:
        return (f"No finite ε: after {after}, δ(ε) stays above δ = {format_upper(delta)} for every ε. With a "
                "probability above δ the privacy loss is infinite — an event that can happen with one dataset and "
                "never with its neighbour, such as a value seen once in the data appearing in the release. Fewer "
                "releases, a smaller m, a larger θ or a larger δ bring it back to a finite ε.")
    if value == 0:
        return (f"After {after}, δ(0) — how far apart the release's distributions on two neighbouring datasets are "
                f"in total variation — is already at most δ = {format_upper(delta)}: no test tells the two apart "
                "beyond δ, so ε = 0.")
    return ""


def format_composed(value, delta) -> str:
    """A total ε of composed releases with its δ, as one privacy statement (docs/audit.md §4).

    A total ε of 0 is printed with its δ, never alone: "(ε, δ) = (0, 0.0141)" — the whole
    privacy loss then sits in δ (δ(0) is already at most δ), and "total ε = 0" alone would read
    as perfect privacy. Otherwise "total ε = …" rounded up (:func:`format_eps`).

    Parameters
    ----------
    value : float in [0, ∞]
    delta : float in [0, 1]

    Returns
    -------
    str
        For example ``format_composed(0.0, 0.0141) == "(ε, δ) = (0, 0.0141): all of the loss in δ"``.
    """
    if float(value) == 0:
        return f"(ε, δ) = (0, {format_upper(delta)}): all of the loss in δ"
    return f"total ε = {format_eps(value)}"


def format_certified_eps(value, digits: int = 3) -> str:
    """An audit's certified lower bound on ε, rounded *down* (:func:`format_lower`); 0 when the
    bound is at most 0 (an attack no better than chance certifies nothing)."""
    value = float(value)
    if math.isnan(value):
        return "n/a"
    return format_lower(max(value, 0.0), digits)


def certified_eps_note(value) -> str:
    """Plain words (a clause, to follow "the audit certifies nothing: ") for an audit's certified
    ε of 0 (docs/audit.md §5.3), ``""`` otherwise.

    An audit proves a *lower* bound: every attack's operating point, with its confidence
    interval, shows that ε is at least that large. A bound of 0 is what every mechanism —
    private or not — passes: it certifies nothing, and it does not prove the guarantee.
    """
    value = float(value)
    if math.isnan(value) or value <= 0:
        return ("no attack told the data from its neighbour better than chance and the stated δ allow, so its "
                "lower bound is ε ≥ 0. That is what a correct mechanism shows, but it does not prove the guarantee: "
                "an audit can only refute one.")
    return ""


def format_risk(value, digits: int = 3) -> str:
    """A residual disclosure risk estimate ``(r_train − r_control)/(1 − r_control)`` as shown.

    Rounded *up* (a risk is safe when overstated); a negative estimate — the attack did no
    better on the released records than on the held-out control — is Monte Carlo noise
    around 0 and is shown as ``"≤ 0 (noise)"``, NaN as ``"n/a"`` (:func:`risk_note`).
    """
    value = float(value)
    if math.isnan(value):
        return "n/a"
    if value <= 0:
        return "≤ 0 (noise)" if value < 0 else "0"
    return format_upper(value, digits)


def format_risk_interval(lower, upper, digits: int = 3) -> str:
    """The interval of a residual risk, each end clipped to [0, 1] (a risk below 0 is noise,
    :func:`format_risk`): the lower end rounded down, the upper end rounded up."""
    lower, upper = float(lower), float(upper)
    if math.isnan(lower) or math.isnan(upper):
        return "n/a"
    lower, upper = min(max(lower, 0.0), 1.0), min(max(upper, 0.0), 1.0)
    return f"[{format_lower(lower, digits)}, {format_upper(upper, digits)}]"


def risk_note(values) -> str:
    """Plain words for residual risks shown as ``"≤ 0 (noise)"`` (:func:`format_risk`), ``""`` when
    none is negative."""
    if not any(float(v) < 0 for v in values):
        return ""
    return ("A residual risk shown as “≤ 0 (noise)” had a negative estimate: the attack did no better on the "
            "records behind the release than on the held-out control records. The true residual risk cannot be "
            "told from 0 there; the negative value is Monte Carlo noise of the attacks, and interval ends below 0 "
            "are shown as 0.")


#: First characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) read a cell as
#: a formula or a DDE command: ``=``, ``+``, ``-``, ``@``, tab and carriage return (the OWASP
#: list, "CSV Injection").
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
#: A plain decimal number (``-5``, ``+2.5``, ``-1e-3``): a spreadsheet reads it as that number.
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
#: Prefixed to a neutralised cell: the spreadsheets' "this cell is text" mark.
FORMULA_GUARD = "'"


def neutralise_formula(text: str) -> str:
    """One text cell as a spreadsheet shows it without running it (OWASP, "CSV Injection").

    A cell whose first character is one of :data:`FORMULA_TRIGGERS` gets a leading
    apostrophe (``=HYPERLINK(...)`` → ``'=HYPERLINK(...)``), which a spreadsheet shows as
    text and never evaluates. A cell that is a plain decimal number (``-5``, ``+1.5e3``) is
    left as it is: a spreadsheet reads it as that number, not as a formula, so a
    categorical label ``-5`` stays ``-5`` (and reads back as the same label).

    Parameters
    ----------
    text : str

    Returns
    -------
    str
        ``text`` or ``"'" + text``.
    """
    if text[:1] in FORMULA_TRIGGERS and not _PLAIN_NUMBER.fullmatch(text):
        return FORMULA_GUARD + text
    return text


def _safe_column(column: pd.Series) -> pd.Series | None:
    """A column with each *text* cell neutralised, or ``None`` when no cell needs it; numbers,
    booleans and missing cells stay as they are.

    Works on the distinct values (``pandas.factorize``): the cost grows with the distinct
    labels, not with the rows."""
    if not (pd.api.types.is_object_dtype(column) or pd.api.types.is_string_dtype(column)
            or isinstance(column.dtype, pd.CategoricalDtype)):
        return None   # a numeric or boolean column: a negative number is a number
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    labels = list(uniques)
    safe = [neutralise_formula(v) if isinstance(v, str) else v for v in labels]
    if safe == labels:
        return None
    cells = np.asarray(safe + [None], dtype=object)[codes]   # code -1 (missing) picks the None
    return pd.Series(cells, index=column.index, name=column.name, dtype=object).where(codes >= 0, column.astype(object))


def formula_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell and column name a spreadsheet would run neutralised.

    :func:`neutralise_formula` on each column name and on each text cell (``str`` values of
    object, string or categorical columns); numeric columns, negative numbers included,
    are not touched. Every CSV writer of the project calls it just before ``to_csv``.

    Parameters
    ----------
    frame : pandas.DataFrame

    Returns
    -------
    pandas.DataFrame
        ``frame`` itself when nothing needs neutralising, otherwise a copy.
    """
    out = frame
    for j in range(frame.shape[1]):
        safe = _safe_column(frame.iloc[:, j])
        if safe is not None:
            out = out.copy() if out is frame else out
            out.isetitem(j, safe)
    names = [neutralise_formula(c) if isinstance(c, str) else c for c in frame.columns]
    if names != list(frame.columns):
        out = out.set_axis(names, axis=1)
    return out
