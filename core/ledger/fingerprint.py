"""Fingerprints of a dataset (docs/audit.md §8.3).

Two releases under one ledger name are charged to one budget; the fingerprint tells whether
they were made from the same data. :func:`source_fingerprint` is the ledger's: the data a
release was drawn from — the uploaded or read file's bytes, or a bundled sample's name — so
releases of other columns of the same file, or with missing values handled otherwise, are
releases of the same dataset (they are functions of the same records, and the budget is the
records'). :func:`dataset_fingerprint` identifies the released view (its prepared frequency
table and column specs). Both are curator-side: like the hash of an upload, they would let
anyone holding them test candidate datasets, so they are never published (the ledger is a
curator's file).
"""
from __future__ import annotations

import glob
import hashlib
import json
import math
from pathlib import Path

import numpy as np

from ..data import FrequencyTable

__all__ = ["dataset_fingerprint", "source_fingerprint"]

#: Recipe sources that name their data without a path: a bundled sample, or an upload by the
#: SHA-256 of its bytes (core.release.recipe.sample_source / upload_source).
_NAMED_SOURCES = ("sample:", "upload:")
_CHUNK = 1 << 20


def source_fingerprint(source: str) -> str:
    """SHA-256 (hex) of the data a release was drawn from: the recipe's ``source``.

    ``"upload:<sha256>"`` and ``"sample:<name>"`` are hashed as they are (an upload's bytes are
    in its hash already); a file path, or a glob of files, by the bytes of every file it
    names, in sorted order, read in 1 MiB chunks (memory does not grow with the file).

    Raises
    ------
    ValueError
        ``source`` is not a non-empty string, or names no readable file.
    """
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"source must be a recipe's data source (a path, 'sample:…' or 'upload:…'), got {source!r}")
    digest = hashlib.sha256()
    if source.startswith(_NAMED_SOURCES):
        digest.update(source.encode("utf-8"))
        return digest.hexdigest()
    files = sorted(glob.glob(source)) or [source]
    for name in files:
        path = Path(name)
        if not path.is_file():
            raise ValueError(f"source names no readable file: {name!r}")
        digest.update(f"{len(files)}\0{path.stat().st_size}\0".encode("ascii"))
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _token(value):
    """A canonical JSON token of one cell: floats by their exact hex form, missing as null."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool):
        return ["b", value]
    if isinstance(value, float):
        return ["f", value.hex()]
    if isinstance(value, int):
        return ["i", str(value)]
    return ["s", str(value)]


def dataset_fingerprint(table: FrequencyTable, columns=(), coarsening=()) -> str:
    """SHA-256 (hex) of a frequency table and the specs it was prepared with.

    Parameters
    ----------
    table : core.data.FrequencyTable
        The prepared table (``PreparedData.table``): atoms and counts.
    columns : sequence of dict
        The column specs as JSON dicts (``ReleaseRecipe.column_dicts()``).
    coarsening : sequence of dict
        The coarsening transforms as dicts (``ColumnTransform.to_dict()``).
    """
    if not isinstance(table, FrequencyTable):
        raise ValueError(f"table must be a core.data.FrequencyTable, got {type(table).__name__}")
    digest = hashlib.sha256()
    header = {"columns": list(columns), "coarsening": list(coarsening), "k": table.k, "n": table.n}
    digest.update(json.dumps(header, sort_keys=True, default=str).encode("utf-8") + b"\n")
    atoms = np.asarray(table.atoms)
    if atoms.dtype.kind in "biuf":
        digest.update(f"{atoms.dtype.str}{atoms.shape}".encode("ascii"))
        digest.update(np.ascontiguousarray(atoms).tobytes())
    else:
        rows = atoms.reshape(atoms.shape[0], -1)
        for row in rows:
            digest.update(json.dumps([_token(v) for v in row], ensure_ascii=False).encode("utf-8") + b"\n")
    digest.update(np.ascontiguousarray(table.counts, dtype=np.int64).tobytes())
    return digest.hexdigest()
