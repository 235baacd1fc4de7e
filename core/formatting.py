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
from decimal import ROUND_CEILING, Decimal, localcontext

import numpy as np
import pandas as pd

from .validation import check_integer

__all__ = ["CONFIDENTIAL_MARK", "FORMULA_TRIGGERS", "format_upper", "formula_safe", "neutralise_formula"]

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
            rounded = exact.quantize(Decimal(1).scaleb(exact.adjusted() - digits + 1), rounding=ROUND_CEILING)
            rounded = rounded.normalize()
    exponent = rounded.adjusted()
    if -4 <= exponent < digits:
        text = format(rounded, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa = rounded.scaleb(-exponent)
    head = format(mantissa, "f")
    head = head.rstrip("0").rstrip(".") if "." in head else head
    return f"{head}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"


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
