"""Coarsening transforms applied before :func:`core.data.prepare`: rounding to a step, to
significant digits or on the log scale, top/bottom-coding, merging categories
(docs/mathematics.md §3.5).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..validation import check_bounds, check_choice, check_integer, check_real, check_row_counts



_KINDS = ("identity", "round", "signif", "log_round", "clip", "keep", "min_count")


Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class ColumnTransform:
    """One data-independent (or flagged data-dependent) transform of one column.

    Parameters
    ----------
    column : str
    kind : {'identity', 'round', 'signif', 'log_round', 'clip', 'keep', 'min_count'}
    step : float > 0
        ``round``: :math:`\\mathrm{step}\\cdot\\mathrm{round}(x/\\mathrm{step})`;
        ``log_round``: step ``h`` of natural-log rounding (values must be > 0).
    digits : int in [1, 15]
        ``signif``: significant digits.
    bounds : (lo, hi)
        ``clip``: public bounds; values outside are set to the nearest bound.
    keep : tuple of labels
        ``keep``: public list of categories kept; every other becomes ``other_label``.
    min_count : int ≥ 2
        ``min_count``: categories with fewer records become ``other_label`` (reads the data).
    bounds_from_data : bool
        ``clip`` only: the bounds were read from the data (then ``data_dependent``).
    """

    column: str
    kind: str = "identity"
    step: float | None = None
    digits: int | None = None
    bounds: tuple[float, float] | None = None
    keep: tuple | None = None
    min_count: int | None = None
    other_label: str = "other"
    bounds_from_data: bool = False

    def __post_init__(self):
        check_choice("kind", self.kind, _KINDS)
        need = {"round": "step", "log_round": "step", "signif": "digits", "clip": "bounds", "keep": "keep",
                "min_count": "min_count"}.get(self.kind)
        if need is not None and getattr(self, need) is None:
            raise ValueError(f"transform {self.kind!r} of column {self.column!r} needs {need}")
        if self.step is not None:
            object.__setattr__(self, "step", check_real("step", self.step, low=0.0, high=1e300, low_open=True))
        if self.digits is not None:
            object.__setattr__(self, "digits", check_integer("digits", self.digits, minimum=1, maximum=15))
        if self.bounds is not None:
            object.__setattr__(self, "bounds", check_bounds(self.bounds, f"bounds of column {self.column!r}"))
        if self.keep is not None:
            object.__setattr__(self, "keep", tuple(self.keep))
        if self.min_count is not None:
            object.__setattr__(self, "min_count", check_integer("min_count", self.min_count, minimum=2,
                                                                maximum=2**62))

    @property
    def numeric(self) -> bool:
        """Whether the transform applies to numeric columns (else categorical; identity: both)."""
        return self.kind in ("round", "signif", "log_round", "clip")

    @property
    def data_dependent(self) -> bool:
        """The transform's construction reads the confidential data."""
        return self.kind == "min_count" or (self.kind == "clip" and self.bounds_from_data)

    @property
    def label(self) -> str:
        """Short human-readable description."""
        if self.kind == "identity":
            return f"{self.column}: as recorded"
        if self.kind == "round":
            return f"{self.column}: round to {self.step:g}"
        if self.kind == "signif":
            return f"{self.column}: {self.digits} significant digit(s)"
        if self.kind == "log_round":
            return f"{self.column}: log-scale step {self.step:g} (±{100 * math.expm1(self.step / 2):.3g}%)"
        if self.kind == "clip":
            src = " (bounds from the data)" if self.bounds_from_data else ""
            return f"{self.column}: top/bottom-code at [{self.bounds[0]:g}, {self.bounds[1]:g}]{src}"
        if self.kind == "keep":
            return f"{self.column}: keep {len(self.keep)} public categories, rest -> {self.other_label!r}"
        return f"{self.column}: categories with < {self.min_count} records -> {self.other_label!r} (data-dependent)"

    def to_dict(self) -> dict:
        """JSON-ready fields (only those set), for a recipe; :meth:`from_dict` reads them back."""
        out = {"column": self.column, "kind": self.kind}
        for name in ("step", "digits", "min_count"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.bounds is not None:
            out["bounds"] = [self.bounds[0], self.bounds[1]]
        if self.keep is not None:
            out["keep"] = list(self.keep)
        if self.kind in ("keep", "min_count"):
            out["other_label"] = self.other_label
        if self.bounds_from_data:
            out["bounds_from_data"] = True
        return out

    @classmethod
    def from_dict(cls, obj) -> "ColumnTransform":
        """The transform of :meth:`to_dict`; unknown fields are refused (``ValueError``)."""
        if not isinstance(obj, Mapping):
            raise ValueError(f"a coarsening transform must be a JSON object, got {obj!r}")
        known = {"column", "kind", "step", "digits", "bounds", "keep", "min_count", "other_label",
                 "bounds_from_data"}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise ValueError(f"unknown field(s) {unknown} in coarsening transform {dict(obj)!r}; known: "
                             f"{sorted(known)}")
        if "column" not in obj:
            raise ValueError(f"coarsening transform {dict(obj)!r} has no 'column'")
        fields = dict(obj)
        for name in ("bounds", "keep"):   # JSON lists (a number or a string here is a malformed recipe)
            if fields.get(name) is not None:
                if not isinstance(fields[name], (list, tuple)):
                    raise ValueError(f"{name} of coarsening transform {dict(obj)!r} must be a list, "
                                     f"got {fields[name]!r}")
                fields[name] = tuple(fields[name])
        return cls(**fields)

    def apply(self, values, weights=None) -> np.ndarray:
        """The transformed column, shape (n,).

        ``weights`` (shape (n,), whole numbers ≥ 0): each row stands for this many records
        (a frequency table); only ``min_count`` reads them (records per category). A missing
        cell (None, NaN) stays missing and is not a category (NaN in a numeric result).
        """
        if self.kind == "identity":
            return np.asarray(values)
        missing = pd.isna(pd.Series(np.asarray(values, dtype=object))).to_numpy()
        if missing.any():
            # A missing cell stays missing: what it means is the column's own choice
            # (ColumnSpec.missing, docs/mathematics.md §2.5), made after the coarsening.
            present = np.flatnonzero(~missing)
            kept = self.apply(np.asarray(values, dtype=object)[present],
                              None if weights is None else np.asarray(weights)[present])
            out = np.full(missing.size, np.nan if self.numeric else None, dtype=float if self.numeric else object)
            out[present] = kept
            return out
        if self.numeric:
            out = self._apply_numeric(numeric_values(values, self.column))
            if not np.all(np.isfinite(out)):
                raise ValueError(f"{self.label} overflows for some values: choose a coarser step")
            return out
        labels = pd.Series(np.asarray(values, dtype=object))
        if self.kind == "keep":
            merged = ~labels.isin(self.keep)
        else:
            per_label = (labels.value_counts() if weights is None
                         else pd.Series(np.asarray(weights)).groupby(labels.to_numpy(), sort=False).sum())
            merged = labels.map(per_label) < self.min_count
        return labels.where(~merged, self.other_label).to_numpy(dtype=object)


    def _apply_numeric(self, x: np.ndarray) -> np.ndarray:
        if self.kind == "round":
            exponent = math.log10(self.step)
            if exponent == round(exponent) and abs(exponent) <= 15:  # numpy's decimal rounding: no x/step error
                return np.round(x, -int(round(exponent)))
            with np.errstate(over="ignore"):
                return np.round(x / self.step) * self.step
        if self.kind == "signif":
            with np.errstate(divide="ignore"):
                mag = np.floor(np.log10(np.abs(x)))
            decimals = np.where(np.isfinite(mag), self.digits - 1 - mag, 0.0)
            # Like numpy.round: multiply by 10**d when d ≥ 0, divide by the exact 10**-d when d < 0;
            # two factors when 10**d would overflow (|x| below ~1e-290).
            first = np.where(decimals > 290, np.trunc(decimals / 2), 0.0)
            s1, s2 = 10.0 ** first, 10.0 ** np.abs(decimals - first)
            up = decimals >= 0
            return np.where(up, np.round(x * s1 * np.where(up, s2, 1.0)) / np.where(up, s2, 1.0) / s1,
                            np.round(x / np.where(up, 1.0, s2)) * np.where(up, 1.0, s2))
        if self.kind == "log_round":
            if np.any(x <= 0):
                raise ValueError(f"log-scale rounding of column {self.column!r} needs values > 0")
            return np.exp(np.round(np.log(x) / self.step) * self.step)
        return np.clip(x, self.bounds[0], self.bounds[1])


def coarsening_label(transforms) -> str:
    """One line describing a coarsening (its transforms' labels)."""
    return "; ".join(t.label for t in transforms)


def numeric_values(values, column: str) -> np.ndarray:
    """``values`` as finite floats; ``ValueError`` naming ``column`` otherwise."""
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"column {column!r} must be numeric for this transform") from None
    if not np.all(np.isfinite(x)):
        raise ValueError(f"column {column!r} has missing or infinite values: remove or impute them first")
    return x


def factor_codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """(int64 code of each value, number of distinct values), in order of first appearance.
    A missing cell (None, NaN) is one more value, with a code of its own (docs/mathematics.md
    §2.5, "missing is a value"), never a sentinel that could collide in a combined key."""
    codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=False)
    return codes.astype(np.int64), len(uniques)


def distinct_row_counts(columns: list[tuple[np.ndarray, int]], weights=None) -> tuple[np.ndarray, np.ndarray]:
    """(index of the first row of each distinct row, multiplicities) from per-column integer codes
    (``weights``: records per row, for a frequency table)."""
    key, width = columns[0]
    for codes, size in columns[1:]:
        if width * size >= 2**62:  # re-compress so the mixed-radix key stays in int64
            _, key = np.unique(key, return_inverse=True)
            width = int(key.max()) + 1
        key = key * size + codes
        width *= size
    if weights is None:
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        return first, counts
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return first, np.bincount(inverse.ravel(), weights=weights, minlength=first.size).astype(np.int64)


def apply_coarsening(frame: pd.DataFrame, transforms: Sequence[ColumnTransform], counts=None) -> pd.DataFrame:
    """A copy of ``frame`` with each transform applied to its column, in original units.

    This is the step between reading the data and :func:`core.data.prepare` (the recipe's
    ``coarsening``). Columns without a transform are kept; at most one transform per column.

    Parameters
    ----------
    frame : pandas.DataFrame, shape (n, d)
    transforms : sequence of ColumnTransform
    counts : array of int, shape (n,), optional
        Records per row when ``frame`` is a frequency table (``min_count`` counts records).

    Raises
    ------
    ValueError
        A transform names a column not in ``frame``, two transforms share a column, or a
        transform refuses the column (missing, non-numeric, non-positive for log).
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    transforms = tuple(transforms)
    seen = set()
    for t in transforms:
        if not isinstance(t, ColumnTransform):
            raise ValueError(f"coarsening must list ColumnTransform objects, got {t!r}")
        if t.column not in frame.columns:
            raise ValueError(f"coarsening transform for column {t.column!r}, which is not among "
                             f"{list(frame.columns)}")
        if t.column in seen:
            raise ValueError(f"coarsening has two transforms for column {t.column!r}")
        seen.add(t.column)
    counts = check_row_counts(counts, len(frame))
    out = frame.copy()
    for t in transforms:
        if t.kind != "identity":
            out[t.column] = t.apply(frame[t.column].to_numpy(), weights=counts)
    return out
