"""The data layer: read a file, prepare columns for the mechanism, reduce to a frequency table.

* :mod:`.reading` — :func:`read_table` reads a path, bytes or an uploaded file into a
  ``pandas.DataFrame`` and a :class:`ReadDecisions` record of everything it decided
  (delimiter, encoding, header, per-column kind, notes), refusing ragged rows, binary files
  and undecodable text with a :class:`ValueError` a user can act on. Integer columns are
  read exactly, so values beyond :math:`2^{53}` stay distinct;
* :mod:`.specs` — :class:`ColumnSpec`, what the user says about a column (including what a
  missing cell means, :data:`MISSING_CHOICES`: one more value, or drop the record);
* :mod:`.prepare` — :func:`prepare` applies the public transforms of a numeric column, in
  this order and in these units:

  .. math::

      x \\xrightarrow{\\ \\text{round}(x,\\,d)\\ } x_d
        \\xrightarrow{\\ \\text{clip to }[lo,\\,hi]\\ } x_c
        \\xrightarrow{\\ \\log\\ (\\text{optional})\\ } u
        \\xrightarrow{\\ (u - g(lo)) / (g(hi) - g(lo))\\ } t \\in [0, 1]

  (docs/mathematics.md §2.4); :meth:`PreparedData.to_original` maps synthetic values back;
* :mod:`.table` — :func:`frequency_table`: distinct values and multiplicities, singleton
  count and spectrum (docs/mathematics.md §1.1); :func:`rounding_profile`;
* :mod:`.engines` — :func:`aggregate`, :func:`distinct_values`, :func:`read_head`: files of
  any size reduced by DuckDB, Dask or pandas (docs/scale.md);
* :mod:`.loading` — how the dashboard and the release recipe load a file: its format
  (:func:`detect_format`), an exact full read or the lean path through the frequency table
  (:func:`takes_lean_path`), limits checked before reading (:func:`check_read_limits`), a
  bounded head (:func:`read_file_head`), the default kinds, columns and counts column, and
  the preparation of a file or a frame (:func:`prepare_source`, :func:`prepare_frame`;
  docs/scale.md);
* :mod:`.domain` — the base measures :class:`UniformBase`, :class:`CategoricalBase`;
* :mod:`.coarsening` — the coarsening transforms (:class:`ColumnTransform`,
  :func:`apply_coarsening`; docs/mathematics.md §3.5).

Bounds are public knowledge by assumption. When they are missing they are read off the
data, with a :class:`~core.validation.PrivacyLeakWarning` and a per-column
``bounds_from_data`` flag so that a user interface can say the guarantee is weakened.
"""

from .coarsening import (
    ColumnTransform,
    apply_coarsening,
    coarsening_label,
    distinct_row_counts,
    factor_codes,
    numeric_values,
)
from .domain import CategoricalBase, GridBase, PublicGrid, UniformBase, public_domain_size
from .engines import (
    ENGINES,
    FORMATS,
    HEAD_BYTES,
    Aggregated,
    DistinctValues,
    aggregate,
    counts_from_column,
    distinct_values,
    read_head,
)
from .loading import (
    COUNT_NAMES,
    FULL_READ_MAX_BYTES,
    PARQUET_HEAD_ROWS,
    FileHead,
    check_read_limits,
    default_columns,
    default_counts_column,
    default_transform,
    detect_format,
    missing_counts,
    mostly_numeric,
    prepare_frame,
    prepare_source,
    read_file_head,
    takes_lean_path,
)
from .prepare import PreparedColumn, PreparedData, prepare, released_numbers
from .reading import (
    DEFAULT_MAX_BYTES,
    DELIMITERS,
    NA_TEXT,
    ColumnReading,
    ReadDecisions,
    ReadResult,
    read_csv,
    read_table,
)
from .specs import MISSING_CHOICES, ColumnSpec, normalise_specs
from .table import FrequencyTable, frequency_table, rounding_profile

__all__ = [
    "COUNT_NAMES", "DEFAULT_MAX_BYTES", "MISSING_CHOICES", "DELIMITERS", "ENGINES", "FORMATS", "FULL_READ_MAX_BYTES", "HEAD_BYTES",
    "NA_TEXT", "PARQUET_HEAD_ROWS", "Aggregated", "CategoricalBase", "GridBase", "PublicGrid", "ColumnReading", "ColumnSpec",
    "ColumnTransform", "DistinctValues", "FileHead", "FrequencyTable", "PreparedColumn", "PreparedData",
    "ReadDecisions", "ReadResult", "UniformBase", "aggregate", "apply_coarsening", "check_read_limits",
    "coarsening_label", "counts_from_column", "default_columns", "default_counts_column", "default_transform", "detect_format",
    "distinct_row_counts", "distinct_values", "factor_codes", "frequency_table", "missing_counts", "mostly_numeric",
    "normalise_specs", "numeric_values", "prepare", "prepare_frame", "prepare_source", "public_domain_size",
    "read_csv", "read_file_head", "read_head", "read_table", "released_numbers", "rounding_profile",
    "takes_lean_path",
]
