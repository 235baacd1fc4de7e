"""The confidential data as the comparison sees them: numeric and categorical columns on the
unit box, with what is public about each (docs/mathematics.md §4.7, docs/quality.md §8).

A numeric column is scaled to [0, 1] with its public bounds (as for the histogram baselines
of docs/mathematics.md §4); a categorical column with K categories is put at the positions
:math:`(c + 1/2)/K` of its categories (:func:`core.mechanisms.category_positions`), so that
every mechanism runs on one array and a histogram over the product of numeric bins and
public categories puts category ``c`` in cell ``c``. The K categories are the column's
*public* list (``ColumnSpec.categories``) when it has one; otherwise the observed ones,
which only PYPP, its old-values variant and the bootstrap may use (they never need a
domain), so the baselines that do are skipped for such a column.

The metrics are then read in each column's own terms: a numeric column in its original
units (:meth:`ComparisonColumn.original`), a categorical one as category codes, with code
K for every value outside the K categories — a new label drawn by PYPP
(:meth:`ComparisonColumn.codes`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import FrequencyTable, PreparedColumn, PreparedData
from ..mechanisms import category_codes, category_positions

__all__ = ["ComparisonColumn", "ComparisonTable", "comparison_table", "OTHER_CATEGORY"]

#: Label of every released value outside a categorical column's listed categories (new labels).
OTHER_CATEGORY = "(new category)"


@dataclass(frozen=True, eq=False)
class ComparisonColumn:
    """One column of a :class:`ComparisonTable`.

    Attributes
    ----------
    name : str
    kind : {"numeric", "categorical"}
    labels : tuple
        Categorical: the label of each code 0..K−1 (the public list, or the observed
        categories in sorted order when there is none); empty for a numeric column.
    public : bool
        Categorical: ``labels`` is the column's public category list.
    info : PreparedColumn or None
        Numeric: the prepared column, whose inverse maps [0, 1] back to original units.
    """

    name: str
    kind: str
    labels: tuple = ()
    public: bool = True
    info: PreparedColumn | None = None

    @property
    def size(self) -> int | None:
        """K for a categorical column, ``None`` for a numeric one (an entry of ``levels``)."""
        return len(self.labels) if self.kind == "categorical" else None

    def original(self, values) -> np.ndarray:
        """Numeric: values on [0, 1] mapped to original units (float64, same shape), by the
        column's own inverse (:meth:`core.data.PreparedColumn.inverse`: old values come back
        exactly, new ones through the bounds, log and the output precision)."""
        if self.kind != "numeric":
            raise ValueError(f"column {self.name!r} is categorical: it has no original numeric units")
        t = np.asarray(values, dtype=np.float64)
        return np.asarray(self.info.inverse(t.ravel()), dtype=np.float64).reshape(t.shape)

    def codes(self, values) -> np.ndarray:
        """Categorical: the code 0..K−1 of each value, K for any other value (a new label)."""
        if self.kind != "categorical":
            raise ValueError(f"column {self.name!r} is numeric: it has no category codes")
        return category_codes(values, len(self.labels))

    def shares(self, values, counts=None) -> np.ndarray:
        """Categorical: the share of each category 0..K−1 and, last, of every other value,
        shape (K + 1,); ``counts``: multiplicities of ``values`` (a frequency table)."""
        codes = self.codes(np.ravel(values))
        weights = None if counts is None else np.asarray(counts, dtype=np.float64)
        total = np.bincount(codes, weights=weights, minlength=len(self.labels) + 1).astype(np.float64)
        return total / total.sum()

    def category_labels(self, values) -> np.ndarray:
        """Categorical: the label of each value (``OTHER_CATEGORY`` for a new one), as objects."""
        names = np.asarray(list(self.labels) + [OTHER_CATEGORY], dtype=object)
        return names[self.codes(values)]


@dataclass(frozen=True, eq=False)
class ComparisonTable:
    """The frequency table of the data on the unit box, with its columns (see the module docstring).

    Attributes
    ----------
    atoms : ndarray of float64, shape (k,) for one column, (k, d) otherwise, values in [0, 1]
    counts : ndarray of int64, shape (k,)
    columns : tuple of ComparisonColumn, length d
    missing_left_out : int
        Records left out because a numeric column has no number in them ("missing is a value",
        docs/mathematics.md §2.5): the comparison's metrics and mechanisms work on numbers on
        [0, 1], so it is over the other records (the pages say how many).
    """

    atoms: np.ndarray
    counts: np.ndarray
    columns: tuple
    missing_left_out: int = 0

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def k(self) -> int:
        return int(self.counts.size)

    @property
    def d(self) -> int:
        return len(self.columns)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def levels(self) -> tuple | None:
        """Per column ``None`` (numeric) or K (categorical), the ``levels`` of the histogram
        mechanisms; ``None`` when every column is numeric."""
        sizes = tuple(c.size for c in self.columns)
        return None if all(s is None for s in sizes) else sizes

    @property
    def unlisted(self) -> tuple[str, ...]:
        """Names of the categorical columns without a public category list."""
        return tuple(c.name for c in self.columns if c.kind == "categorical" and not c.public)

    @property
    def table(self) -> FrequencyTable:
        """The atoms and counts as a :class:`core.data.FrequencyTable`."""
        return FrequencyTable(self.atoms, self.counts)


def comparison_table(prepared: PreparedData) -> ComparisonTable:
    """The :class:`ComparisonTable` of prepared data (cost O(k·d), never the n records).

    Parameters
    ----------
    prepared : PreparedData
        Any mix of numeric columns scaled to [0, 1] (``ColumnSpec.scale``, the default) and
        categorical columns.

    Raises
    ------
    ValueError
        A numeric column is not scaled to [0, 1] (named).
    """
    if not isinstance(prepared, PreparedData):
        raise ValueError(f"prepared must be PreparedData (core.data.prepare), got {type(prepared).__name__}")
    atoms = prepared.table.atoms
    rows = atoms.reshape(atoms.shape[0], -1)
    out = np.empty(rows.shape, dtype=np.float64)
    columns = []
    for j, info in enumerate(prepared.column_info):
        name = str(info.name)
        if info.kind == "numeric":
            if not info.spec.scale:
                raise ValueError(f"column {name!r} is not scaled to [0, 1] with its bounds; the comparison needs "
                                 "every numeric column scaled (the histogram baselines bin [0, 1])")
            out[:, j] = np.asarray(rows[:, j], dtype=np.float64)
            columns.append(ComparisonColumn(name, "numeric", info=info))
            continue
        values = rows[:, j]
        if info.spec.categories is not None:
            # the column's public domain: its list, and the missing marker None when missing is a value
            # (one more public category, docs/mathematics.md §2.5)
            labels, public = tuple(info.base.categories), True
        else:   # sorted by their text, so mixed label types (numbers, strings) sort too
            labels, public = tuple(sorted(set(values.tolist()), key=lambda v: (str(v), repr(v)))), False
        index = {label: c for c, label in enumerate(labels)}
        out[:, j] = category_positions([index[v] for v in values.tolist()], len(labels))
        columns.append(ComparisonColumn(name, "categorical", labels=labels, public=public))
    counts = np.asarray(prepared.table.counts, dtype=np.int64)
    # a missing cell of a numeric column is an atom outside the numbers (NaN): left out, counted
    numbers = ~np.isnan(out).any(axis=1)
    left_out = int(counts[~numbers].sum())
    if left_out:
        if not numbers.any():
            raise ValueError("every record has a missing value in a numeric column: there is no number to compare")
        out, counts = out[numbers], counts[numbers]
    data = out[:, 0] if atoms.ndim == 1 else out
    return ComparisonTable(atoms=data, counts=counts, columns=tuple(columns), missing_left_out=left_out)
