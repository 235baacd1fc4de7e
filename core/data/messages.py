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
    shown = ", ".join(str(int(p) + 1) for p in positions[:_SHOW])
    if positions.size > _SHOW:
        shown += f" and {positions.size - _SHOW} more"
    return f"row {shown}" if positions.size == 1 else f"rows {shown}"


def _list_names(names: Sequence, limit: int = 20) -> str:
    names = [repr(n) for n in names]
    text = ", ".join(names[:limit])
    return text + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")
