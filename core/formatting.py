"""Numbers shown to a user, rounded to the safe side (docs/accuracy.md, "Printed numbers").

:func:`format_upper` prints every δ and every ε threshold of the project — on the pages, in
the reports and public files, on the command line — rounded *up*, so that a printed
privacy number is never smaller than the computed one. It lives here, without plotly, so
that reports and the command line do not import the plotting stack. :data:`CONFIDENTIAL_MARK`
is the one wording that marks every curator-only file and figure.
"""

from __future__ import annotations

import math
import numbers
from decimal import ROUND_CEILING, Decimal, localcontext

import numpy as np

from .validation import check_integer

__all__ = ["CONFIDENTIAL_MARK", "format_upper"]

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
