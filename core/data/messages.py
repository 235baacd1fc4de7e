"""Wording shared by the data layer's error messages: which rows, counted how.
"""
from __future__ import annotations

import contextvars
from typing import Sequence

import numpy as np




_SHOW = 5  # how many offending rows an error message lists


#: Set while :func:`prepare` works on a frequency table (``counts`` given): its entries are
#: distinct values, not rows of a file, and the messages say so.
_TABLE_ENTRIES = contextvars.ContextVar("table_entries", default=False)

#: Set while :func:`prepare` works on the rows left after dropping records with a missing
#: value: the position of each kept row in the file, so that messages name the file's rows.
_ROW_ORIGIN = contextvars.ContextVar("row_origin", default=None)


#: The two choices a column with missing cells needs, and where to make them (every
#: message that refuses missing cells ends with this).
_MISSING_CHOICES_TEXT = (
    "Choose what a missing cell means for this column: 'missing is a value' (one more value, released as an "
    "empty cell) or 'drop records with a missing value' (n is then counted after dropping, which depends on "
    "the data) — in the column's panel on the Data page, with --missing value or --missing drop on the "
    "command line, or \"missing\": \"value\" or \"drop\" for the column in a recipe.")


def _records(positions: np.ndarray, weights: np.ndarray | None) -> int:
    """How many records the rows at ``positions`` stand for."""
    return int(positions.size) if weights is None else int(weights[positions].sum())


def _row_note() -> str:
    return "" if _TABLE_ENTRIES.get() else " (rows counted from 1 after the header)"


def _rows(positions: np.ndarray) -> str:
    """'row 3' or 'rows 3, 8, 10, 11, 12 and 4 more': 1-based row numbers for messages
    (``'2 distinct value(s) of the frequency table'`` when preparing a table)."""
    if _TABLE_ENTRIES.get():
        return f"{positions.size} distinct value(s) of the frequency table"
    origin = _ROW_ORIGIN.get()
    if origin is not None:
        positions = origin[positions]
    shown = ", ".join(str(int(p) + 1) for p in positions[:_SHOW])
    if positions.size > _SHOW:
        shown += f" and {positions.size - _SHOW} more"
    return f"row {shown}" if positions.size == 1 else f"rows {shown}"


def _list_names(names: Sequence, limit: int = 20) -> str:
    names = [repr(n) for n in names]
    text = ", ".join(names[:limit])
    return text + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")
