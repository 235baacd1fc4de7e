"""One release recipe for the dashboard and the command line.

A :class:`ReleaseRecipe` says everything that determines a release: the data source and
its columns, every per-column transform (:class:`core.data.ColumnSpec`), the mechanism
and its parameters, the rule that fixes the release size ``m``, the privacy target
(ε, δ) at which the guarantees are stated, and the seed. It has a JSON form with a
schema version (:meth:`ReleaseRecipe.to_json`, :meth:`ReleaseRecipe.from_json`).

:func:`run_recipe` is the one function that turns a recipe and the confidential data into
a :class:`ReleaseResult`: the synthetic data in original units (drawn exactly as
``core.mechanisms.pypp_release`` with ``numpy.random.default_rng(seed)``, the same draw
as the dashboard and the command line), the curator's report
(:func:`core.release.release_report`, with instance-level statements about the
confidential data) and the public report (:func:`public_report`, built from public
quantities only: the recipe, ``n`` and ``m``). :mod:`core.release.bundle` writes them as two
separate zip files.

JSON form (``schema_version`` 1)::

    {
      "schema": "bnp-synth/release-recipe",
      "schema_version": 1,
      "data": {"source": "sample:cps_earnings.csv", "sep": null, "header": null,
               "encoding": null, "thousands": null, "keep_na_text": false,
               "counts_column": null,
               "coarsening": [{"column": "earnings", "kind": "signif", "digits": 2}],
               "coarsening_chosen_from_data": false, "settings_chosen_from_data": false,
               "mechanism_chosen_from_data": false,
               "columns": [{"name": "earnings", "kind": "numeric", "log": false,
                            "bounds": [0.0, 100.0], "decimals": 2, "scale": true,
                            "categories": null}]},
      "mechanism": {"name": "pypp", "sigma": 0.0, "theta": 2.0},
      "release_size": {"rule": "fixed", "m": 100},
      "privacy_target": {"eps": 2.5, "delta": 0.01},
      "seed": 12345,
      "accounting": {"n_mc": 20000, "releases": 1}
    }

The reader's options in ``data`` (``sep``, ``header``, ``encoding``, ``thousands``,
``keep_na_text``: :func:`core.data.read_table`; ``null`` means "detect") and
``counts_column`` (the input is a frequency table ``value(s), count``) are optional when
read — a recipe without them reads the file with the defaults — and always written, so
that a replay reads the file exactly as the release did.

``coarsening`` (optional when read, always written; ``[]`` = none) lists the
:class:`core.data.ColumnTransform` applied to the rows after reading and before
the column transforms (rounding to a step or to significant digits, log-scale rounding,
top/bottom-coding, merging categories into ``"other"``); each entry is
``ColumnTransform.to_dict()``. The transforms are public: they are part of the published
recipe. ``coarsening_chosen_from_data`` records that the coarsening was picked with the
coarsening advisor (after seeing its singletons and m* on the confidential data), which the
public report states as a data-dependent choice, as it does for bounds read from the data.
Each column's ``missing`` (optional; written only when chosen) says what a missing cell of
that column means (:class:`core.data.ColumnSpec`): absent or ``null`` — no choice, and a
column with missing cells is refused; ``"value"`` — one more value, released as an empty
cell; ``"drop"`` — the records with a missing cell are removed before the mechanism, so n
depends on the data, which the public report states (docs/mathematics.md §2.5). Recipes
written before this field existed read as before, and a recipe without the choice is
written as before.
A numeric column's ``precision_from_data`` (optional, default false, written only when true)
rounds its new values to the precision read off the data: a data-dependent choice
(docs/mathematics.md §2.4, §2.6); otherwise, without ``decimals``, they keep full precision.
``settings_chosen_from_data`` (optional, default false) records that θ (or α and the grid
steps of a pure option) and m were loaded from the release planner, which searched them on
the confidential data: the public report states that choice too.
``mechanism_chosen_from_data`` (optional, default false) records that the mechanism itself was
chosen on the release planner's side-by-side comparison of candidates, whose utility is
measured on the confidential data (docs/verdicts.md §7): a data-dependent choice as well.

``mechanism`` names the mechanism and holds its parameters (:data:`MECHANISMS`;
:mod:`core.release.mechanisms`): ``{"name": "pypp", "sigma", "theta"}``, or a histogram
mechanism with its public bins, e.g. ``{"name": "aim", "bins": 10}``; such a recipe needs public
bounds and category lists for every column, and its ``release_size.rule`` may be ``"n"`` (m = n,
its default). Its draw is the mechanism's own from ``numpy.random.default_rng(seed)``, so it
replays byte for byte too (docs/verdicts.md §6).

``data.source`` is ``"sample:<file name>"`` (a bundled sample in ``sample_data/``),
``"upload:<sha256 of the file>"`` (an upload; the data must be passed to
:func:`run_recipe`), ``"upload"`` (an upload whose hash is not published), or a file
path. ``release_size.rule`` is ``"fixed"`` (with ``m``), ``"global"`` (the largest m
admissible under the exact global guarantee at (ε, δ) — for σ = 0 the exact privacy profile
1 − (1 − T₁)^k, docs/verdicts.md §2; depends on ``n`` only) or ``"instance"`` (the largest m whose instance-level δ_x(ε) at the data
is within δ; σ = 0; a choice that depends on the confidential data). A top-level
``"CONFIDENTIAL"`` string (the curator's copy carries one) is accepted and ignored.
Unknown schema versions and unknown fields are refused.

The *public* form (:meth:`ReleaseRecipe.public`) drops what must not be published:
the seed (with it, and all records but one, anyone can recompute the release for each
candidate value of the last record and see which one gives the published output: the
randomness *is* the protection), the hash of an uploaded file (the same test, run on
candidate files) and any directory of a local path.

The mathematics is in ``docs/mathematics.md``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.resources
import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import numpy as np
import pandas as pd

from .. import __version__
from .. import data as data_layer
from ..data import ColumnTransform
from ..formatting import CONFIDENTIAL_MARK, formula_safe
from .choices import data_dependent_choices
from .mechanisms import MAX_RECIPE_SIZE, RELEASE_MECHANISMS, release_mechanism
from .public import public_report
from ..validation import (
    PrivacyLeakWarning,
    check_choice,
    check_delta,
    check_fields,
    check_finite_eps,
    check_flag,
    check_integer,
    check_seed,
)

__all__ = [
    "MAX_RECIPE_SIZE",
    "MECHANISMS",
    "SAMPLE_DIR",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SIZE_RULES",
    "ReleaseRecipe",
    "ReleaseResult",
    "public_report",
    "public_source",
    "resolve_release_size",
    "run_recipe",
    "sample_source",
    "upload_source",
]

SCHEMA = "bnp-synth/release-recipe"
SCHEMA_VERSION = 1

# MAX_RECIPE_SIZE (core.release.mechanisms): the largest release a recipe makes. An unchecked
# m (``--m 10000000``, or δ close to 1 without a fixed m) is refused up front.
#: Largest recipe file read (bytes): a recipe is a small JSON file, even with long category lists.
MAX_RECIPE_BYTES = 2**24
#: Largest number of Monte Carlo replicates of the σ ∈ (0, 1) accounting.
MAX_N_MC = 10**6

#: Mechanisms a recipe can name, with their parameters in the recipe's ``mechanism`` object
#: (:data:`core.release.mechanisms.RELEASE_MECHANISMS`).
MECHANISMS = {key: mechanism.parameters for key, mechanism in RELEASE_MECHANISMS.items()}
#: Release-size rules: a fixed m; the largest m admissible under the global (docs/verdicts.md §2)
#: or the instance-level guarantee at the privacy target (PYPP); m = n (the histogram mechanisms).
SIZE_RULES = ("fixed", "global", "instance", "n")

#: Bundled samples: the ``sample_data`` package, found through importlib.resources (its
#: files are real files, so a ``Path`` serves every reader).
SAMPLE_DIR = Path(str(importlib.resources.files("sample_data")))


_SAMPLE, _UPLOAD = "sample:", "upload"
#: The public name of a data file given by path (its name and directory stay with the curator).
_FILE = "file"
_COLUMN_FIELDS = ("name", "kind", "log", "bounds", "decimals", "scale", "categories", "grid", "missing",
                  "precision_from_data")
_TOP_FIELDS = ("schema", "schema_version", "data", "mechanism", "release_size", "privacy_target", "seed",
               "accounting", "CONFIDENTIAL")


def sample_source(name: str) -> str:
    """The recipe source of a bundled sample: ``"sample:<name>"``."""
    return _SAMPLE + str(name)


def upload_source(content: bytes) -> str:
    """The recipe source of uploaded bytes: ``"upload:<sha256 hex>"`` (kept out of the public form)."""
    return f"{_UPLOAD}:{hashlib.sha256(bytes(content)).hexdigest()}"


def public_source(source: str) -> str:
    """The form of a source that may be published: a bundled sample by name; an upload or a
    file as ``"upload"`` or ``"file"`` — no hash, no path, no file name (a name can say
    whose data it is)."""
    if source.startswith(_SAMPLE):
        return source
    if source == _UPLOAD or source.startswith(_UPLOAD + ":"):
        return _UPLOAD
    return _FILE


def _check_source(source) -> str:
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"data source must be a non-empty string (a file path, 'sample:<file name>' or "
                         f"'upload:<sha256>'), got {source!r}")
    if source.startswith(_SAMPLE):
        name = source[len(_SAMPLE):]
        if not name or name != PurePath(name).name or name in (".", ".."):
            raise ValueError(f"data source {source!r}: a sample is named by its file name in sample_data/, "
                             "e.g. 'sample:cps_earnings.csv'")
    elif source.startswith(_UPLOAD + ":"):
        digest = source[len(_UPLOAD) + 1:]
        if len(digest) != 64 or any(ch not in "0123456789abcdef" for ch in digest):
            raise ValueError(f"data source {source!r}: an upload is named by the SHA-256 of its bytes, "
                             "64 lowercase hexadecimal digits ('upload:<sha256>')")
    return source


def _plain_number(name: str, value) -> float:
    """A real number as a Python float, so messages print ``0.0``, not ``np.float64(0.0)``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return float(value)


def _plain_int(name: str, value):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return int(value)  # JSON writers may emit 100.0 for 100
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return value


def _json_scalar(name: str, value):
    """A category label as a plain JSON scalar (str, int, finite float or bool)."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if not isinstance(value, (str, int, float, bool)):
        raise ValueError(f"{name} must be a string or a number, got {value!r}")
    return value


def _check_coarsening(transforms, columns) -> tuple:
    """The recipe's coarsening as a tuple of ColumnTransform, each on a distinct released column."""
    if isinstance(transforms, (ColumnTransform, str)) or not hasattr(transforms, "__iter__"):
        raise ValueError(f"coarsening must be a sequence of core.data.ColumnTransform, got {transforms!r}")
    names = [c.name for c in columns]
    seen, out = set(), []
    for t in transforms:
        if not isinstance(t, ColumnTransform):
            raise ValueError(f"coarsening must list core.data.ColumnTransform objects, got {t!r}")
        if t.column not in names:
            raise ValueError(f"coarsening transform for column {t.column!r}, which is not a released column "
                             f"({', '.join(map(repr, names))})")
        if t.column in seen:
            raise ValueError(f"coarsening has two transforms for column {t.column!r}")
        seen.add(t.column)
        if t.keep is not None:   # JSON-safe labels (numpy scalars become Python ones)
            t = dataclasses.replace(t, keep=tuple(_json_scalar(f"keep list of column {t.column!r}", label)
                                                  for label in t.keep))
        out.append(t)
    return tuple(out)


def _check_column(spec) -> data_layer.ColumnSpec:
    if not isinstance(spec, data_layer.ColumnSpec):
        raise ValueError(f"columns must be core.data.ColumnSpec objects, got {type(spec).__name__}")
    if not isinstance(spec.name, str) or not spec.name:
        raise ValueError(f"column names must be non-empty strings (the CSV header), got {spec.name!r}")
    where = f"column {spec.name!r}"
    log = check_flag(f"log of {where}", spec.log)
    scale = check_flag(f"scale of {where}", spec.scale)
    bounds = spec.bounds
    if bounds is not None:
        bounds = (float(bounds[0]), float(bounds[1]))
    categories = spec.categories
    if categories is not None:
        categories = tuple(_json_scalar(f"categories of {where}", c) for c in categories)
    decimals = None if spec.decimals is None else _plain_int(f"decimals of {where}", spec.decimals)
    grid = None if spec.grid is None else _plain_number(f"grid of {where}", spec.grid)
    # Re-run ColumnSpec's own validation on the normalised values.
    return data_layer.ColumnSpec(spec.name, kind=spec.kind, log=log, bounds=bounds, decimals=decimals,
                                 scale=scale, categories=categories, grid=grid, missing=spec.missing,
                                 precision_from_data=spec.precision_from_data)


@dataclass(frozen=True)
class ReleaseRecipe:
    """Everything that determines a release.

    Parameters
    ----------
    source : str
        ``"sample:<file name>"``, ``"upload:<sha256>"`` (see :func:`upload_source`),
        ``"upload"`` or a file path.
    columns : sequence of core.data.ColumnSpec
        The released columns in order, each with its transforms (kind, log, public
        bounds or ``None`` = read off the data, rounding decimals, scaling, public
        categories). A row of the chosen columns is one atom (docs/mathematics.md §2).
    eps : float in (0, ∞)
        The ε at which every guarantee is stated.
    delta : float in (0, 1)
        The δ target the guarantees are compared with (and, for the ``"global"`` and
        ``"instance"`` rules, the δ the release size is chosen for).
    m : int in [1, MAX_RECIPE_SIZE] or None
        The release size with ``size_rule="fixed"``; ``None`` otherwise.
    size_rule : {'fixed', 'global', 'instance'}
        Defaults to ``"fixed"`` when ``m`` is given, ``"global"`` otherwise.
    sigma, theta : float
        Pitman–Yor discount and strength (σ ∈ [0, 1) with θ > −σ, or σ < 0 with θ = z|σ|
        public categories); ``None`` for another mechanism.
    seed : int in [0, 2**128) or None
        Seed of ``numpy.random.default_rng``; ``None`` draws a fresh one in
        :func:`run_recipe` (recorded in the result's recipe).
    mechanism : str
        ``"pypp"`` (default) or another key of :data:`MECHANISMS` (AIM, MST, the OpenDP and the
        seed papers' histograms: :mod:`core.release.mechanisms`).
    bins : int ≥ 1 or None
        Bins per numeric axis of a histogram mechanism (public; default
        :data:`core.release.mechanisms.DEFAULT_BINS`); ``None`` for PYPP.
    sep : str or None
        Field separator of the CSV file; ``None`` lets :func:`core.data.read_table` detect it.
    header : bool or None
        Whether the first row names the columns; ``None`` lets the reader decide.
    encoding : str or None
        Text encoding (a Python codec name); ``None`` detects it.
    thousands : str or None
        Thousands separator removed from numbers (``None``: none).
    keep_na_text : bool
        Keep cells spelled ``NA``, ``NULL``, … as labels.
    counts_column : str or None
        The data are a frequency table: this column holds the count of each row.
    n_mc : int in [1, 10**6]
        Monte Carlo replicates of the σ ∈ (0, 1) accounting in the curator's report.
    releases : int in [1, 1000]
        How many independent releases of this kind the custodian plans from the same data;
        the curator's report adds their composed guarantee (docs/audit.md).
    coarsening : sequence of core.data.ColumnTransform
        Applied to the rows after reading, before ``columns``' transforms
        (:func:`core.data.apply_coarsening`); at most one per column, each naming a
        released column. Default: none.
    coarsening_chosen_from_data : bool
        The coarsening was chosen by looking at the confidential data (the advisor): a
        data-dependent choice no guarantee covers.
    settings_chosen_from_data : bool
        θ (or α and the grid steps of a pure option) and m were chosen by looking at the
        confidential data (the release planner's recommendation): a data-dependent choice no
        guarantee covers.
    mechanism_chosen_from_data : bool
        The mechanism was chosen by comparing candidates' utility measured on the confidential
        data (the release planner's "Candidates side by side", docs/verdicts.md §7): a
        data-dependent choice no guarantee covers.
    """

    source: str
    columns: tuple
    eps: float
    delta: float
    m: int | None = None
    size_rule: str | None = None
    sigma: float = 0.0
    theta: float = 1.0
    seed: int | None = None
    mechanism: str = "pypp"
    sep: str | None = None
    n_mc: int = 20000
    header: bool | None = None
    encoding: str | None = None
    thousands: str | None = None
    keep_na_text: bool = False
    counts_column: str | None = None
    releases: int = 1
    coarsening: tuple = ()
    coarsening_chosen_from_data: bool = False
    settings_chosen_from_data: bool = False
    bins: int | None = None
    mechanism_chosen_from_data: bool = False

    def __post_init__(self):
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731  (frozen)
        put("source", _check_source(self.source))
        if isinstance(self.columns, (data_layer.ColumnSpec, str)) or not hasattr(self.columns, "__iter__"):
            raise ValueError(f"columns must be a sequence of core.data.ColumnSpec, got {self.columns!r}")
        # The data layer's own check (at least one column, none twice), then the JSON-safe form.
        put("columns", tuple(_check_column(c) for c in data_layer.normalise_specs(list(self.columns))))
        put("eps", check_finite_eps(_plain_number("eps", self.eps), "eps"))
        mechanism = release_mechanism(self.mechanism)
        rule = self.size_rule if self.size_rule is not None else (
            "fixed" if self.m is not None else mechanism.default_size_rule)
        put("size_rule", check_choice("size_rule", rule, SIZE_RULES))
        if rule == "fixed":
            if self.m is None:
                raise ValueError("m is required with size_rule 'fixed' (the number of synthetic rows)")
            put("m", check_integer("m", _plain_int("m", self.m), minimum=1, maximum=MAX_RECIPE_SIZE))
        elif self.m is not None:
            raise ValueError(f"m must be None with size_rule {rule!r} (m is then computed from eps and delta), "
                             f"got {self.m!r}")
        if self.bins is not None:
            put("bins", _plain_int("bins", self.bins))
        # the mechanism's own fields (σ, θ and δ for PYPP; bins, δ and the public domain for a histogram)
        for name, value in mechanism.normalise(self).items():
            put(name, value)
        if self.seed is not None:
            put("seed", check_seed(_plain_int("seed", self.seed)))
        if self.sep is not None and (not isinstance(self.sep, str) or not self.sep):
            raise ValueError(f"sep must be a non-empty string or None, got {self.sep!r}")
        put("n_mc", check_integer("n_mc", _plain_int("n_mc", self.n_mc), minimum=1, maximum=MAX_N_MC))
        put("releases", check_integer("releases", _plain_int("releases", self.releases), minimum=1, maximum=1000))
        if self.header is not None:
            put("header", check_flag("header", self.header))
        put("keep_na_text", check_flag("keep_na_text", self.keep_na_text))
        for name in ("encoding", "thousands", "counts_column"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"{name} must be a non-empty string or None, got {value!r}")
        if self.counts_column is not None and self.counts_column in [c.name for c in self.columns]:
            raise ValueError(f"counts_column {self.counts_column!r} is also a released column: release the value "
                             "column(s) only")
        put("coarsening", _check_coarsening(self.coarsening, self.columns))
        put("coarsening_chosen_from_data", check_flag("coarsening_chosen_from_data",
                                                      self.coarsening_chosen_from_data))
        put("settings_chosen_from_data", check_flag("settings_chosen_from_data", self.settings_chosen_from_data))
        put("mechanism_chosen_from_data", check_flag("mechanism_chosen_from_data", self.mechanism_chosen_from_data))

    # ------------------------------------------------------------------ forms
    @property
    def source_kind(self) -> str:
        """``"sample"``, ``"upload"`` or ``"path"``."""
        if self.source.startswith(_SAMPLE):
            return "sample"
        if self.source == _UPLOAD or self.source.startswith(_UPLOAD + ":"):
            return "upload"
        return "path"

    @property
    def bounds_from_data(self) -> tuple[str, ...]:
        """Names of the numeric columns whose bounds are read off the confidential data."""
        return tuple(c.name for c in self.columns if c.kind == "numeric" and c.bounds is None)

    @property
    def precision_from_data(self) -> tuple[str, ...]:
        """Names of the columns whose new values take the precision read off the confidential data
        (``ColumnSpec.precision_from_data``): a data-dependent choice (docs/mathematics.md §2.6)."""
        return tuple(c.name for c in self.columns if c.precision_from_data)

    @property
    def dropped_missing(self) -> tuple[str, ...]:
        """Names of the columns whose records with a missing cell are dropped (``missing='drop'``):
        n is then counted after dropping, a number that depends on the data."""
        return tuple(c.name for c in self.columns if c.missing == "drop")

    @property
    def coarsening_from_data(self) -> tuple[str, ...]:
        """Why the coarsening depends on the data: transforms built by reading it
        (``min_count``, bounds from the data) and/or the choice made with the advisor."""
        reasons = [t.label for t in self.coarsening if t.data_dependent]
        if self.coarsening and self.coarsening_chosen_from_data:
            reasons.append("chosen with the coarsening advisor")
        return tuple(reasons)

    @property
    def depends_on_data(self) -> bool:
        """Whether the confidential data made a choice about the release that no guarantee
        covers (:func:`core.release.choices.data_dependent_choices`: bounds or precision read
        off the data, planner settings, a mechanism chosen on the data, a coarsening built or
        chosen from the data, records dropped for a missing value, an instance-level m, σ ∈ (0, 1))."""
        return bool(data_dependent_choices(self))

    def public(self) -> "ReleaseRecipe":
        """The recipe as it may be published: no seed, no upload hash, no local directory."""
        return dataclasses.replace(self, source=public_source(self.source), seed=None)

    def with_seed(self, seed: int) -> "ReleaseRecipe":
        return dataclasses.replace(self, seed=seed)

    def to_dict(self) -> dict:
        """JSON-ready dict (see the module docstring for the schema)."""
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "data": {
                "source": self.source,
                **self.read_options(),
                "counts_column": self.counts_column,
                "coarsening": [t.to_dict() for t in self.coarsening],
                "coarsening_chosen_from_data": self.coarsening_chosen_from_data,
                "settings_chosen_from_data": self.settings_chosen_from_data,
                "mechanism_chosen_from_data": self.mechanism_chosen_from_data,
                "columns": self.column_dicts(),
            },
            "mechanism": {"name": self.mechanism, **{p: getattr(self, p) for p in MECHANISMS[self.mechanism]}},
            "release_size": {"rule": self.size_rule, "m": self.m},
            "privacy_target": {"eps": self.eps, "delta": self.delta},
            "seed": self.seed,
            "accounting": {"n_mc": self.n_mc, "releases": self.releases},
        }

    def column_dicts(self) -> list[dict]:
        """Each released column's transforms as JSON-ready dicts (kind, log scale, public bounds
        or ``None`` = read off the data, rounding decimals, scaling, public categories, what a
        missing cell means, ``precision_from_data`` when true)."""
        return [{"name": c.name, "kind": c.kind, "log": c.log,
                 "bounds": None if c.bounds is None else [c.bounds[0], c.bounds[1]],
                 "decimals": c.decimals, "scale": c.scale,
                 "categories": None if c.categories is None else list(c.categories), "grid": c.grid,
                 # written only when chosen: a recipe without missing cells is what it always was
                 **({} if c.missing is None else {"missing": c.missing}),
                 # written only when true: absent means the output precision is public (the default)
                 **({"precision_from_data": True} if c.precision_from_data else {})}
                for c in self.columns]

    def read_options(self) -> dict:
        """The options of :func:`core.data.read_table` the recipe fixes (``None``: detect)."""
        return {"sep": self.sep, "header": self.header, "encoding": self.encoding, "thousands": self.thousands,
                "keep_na_text": self.keep_na_text}

    def to_json(self, *, confidential: bool = False) -> str:
        """JSON text (UTF-8, indented, newline-terminated). ``confidential`` puts a
        top-level ``"CONFIDENTIAL"`` key first (the curator's copy)."""
        body = self.to_dict()
        if confidential:
            body = {"CONFIDENTIAL": CONFIDENTIAL_MARK, **body}
        return json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    @classmethod
    def from_dict(cls, obj) -> "ReleaseRecipe":
        """Read the JSON form; refuses unknown schema versions and unknown fields."""
        if not isinstance(obj, dict):
            raise ValueError(f"a release recipe must be a JSON object, got {type(obj).__name__}")
        if obj.get("schema") != SCHEMA or "schema_version" not in obj:
            raise ValueError(f"not a bnp-synth release recipe: expected \"schema\": {SCHEMA!r} and a "
                             f"\"schema_version\", got schema {obj.get('schema')!r}")
        version = obj["schema_version"]
        if isinstance(version, bool) or not isinstance(version, int):
            raise ValueError(f"schema_version must be an integer, got {version!r}")
        if version != SCHEMA_VERSION:
            newer = version > SCHEMA_VERSION
            raise ValueError(f"release recipe schema version {version} is not supported: this bnp-synth "
                             f"({__version__}) reads version {SCHEMA_VERSION}"
                             + ("; upgrade bnp-synth to read it" if newer else ""))
        check_fields("the recipe", obj, _TOP_FIELDS,
                     required=("data", "mechanism", "release_size", "privacy_target"))
        data = check_fields("recipe.data", obj["data"], ("source", "sep", "header", "encoding", "thousands",
                                                         "keep_na_text", "counts_column", "coarsening",
                                                         "coarsening_chosen_from_data",
                                                         "settings_chosen_from_data",
                                                         "mechanism_chosen_from_data", "columns"),
                            required=("source", "columns"))
        if not isinstance(data["columns"], list):
            raise ValueError(f"recipe.data.columns must be a list of column objects, got {data['columns']!r}")
        columns = []
        for j, entry in enumerate(data["columns"]):
            entry = check_fields(f"recipe.data.columns[{j}]", entry, _COLUMN_FIELDS, required=("name",))
            bounds = entry.get("bounds")
            if bounds is not None:
                if not isinstance(bounds, list) or len(bounds) != 2:
                    raise ValueError(f"bounds of column {entry['name']!r} must be [lo, hi] or null, got {bounds!r}")
                bounds = (_plain_number(f"bounds of column {entry['name']!r}", bounds[0]),
                          _plain_number(f"bounds of column {entry['name']!r}", bounds[1]))
            categories = entry.get("categories")
            if categories is not None and not isinstance(categories, list):
                raise ValueError(f"categories of column {entry['name']!r} must be a list or null, got {categories!r}")
            if categories is not None:   # labels are JSON scalars (a list or an object is a malformed recipe)
                categories = tuple(_json_scalar(f"categories of column {entry['name']!r}", c) for c in categories)
            columns.append(data_layer.ColumnSpec(
                entry["name"], kind=entry.get("kind", "numeric"), log=entry.get("log", False), bounds=bounds,
                decimals=entry.get("decimals"), scale=entry.get("scale", True), categories=categories,
                grid=entry.get("grid"), missing=entry.get("missing"),
                # absent (recipes written before the field existed): False, the public default
                precision_from_data=entry.get("precision_from_data", False)))
        name = check_choice("mechanism", (obj["mechanism"] or {}).get("name") if isinstance(obj["mechanism"], dict)
                            else None, tuple(MECHANISMS))
        params = check_fields("recipe.mechanism", obj["mechanism"], ("name", *MECHANISMS[name]), required=("name",))
        params = {p: params[p] for p in MECHANISMS[name] if p in params}
        release_mechanism(name).check_params(params)
        size = check_fields("recipe.release_size", obj["release_size"], ("rule", "m"), required=("rule",))
        # a pure mechanism has δ = 0: a δ target is optional
        target = check_fields("recipe.privacy_target", obj["privacy_target"], ("eps", "delta"),
                              required=("eps", "delta") if release_mechanism(name).delta_required(params) else ("eps",))
        accounting = check_fields("recipe.accounting", obj.get("accounting", {}), ("n_mc", "releases"))
        coarsening = data.get("coarsening", [])
        if not isinstance(coarsening, list):
            raise ValueError(f"recipe.data.coarsening must be a list of transform objects, got {coarsening!r}")
        return cls(source=data["source"], columns=tuple(columns), eps=target["eps"], delta=target.get("delta"),
                   m=size.get("m"), size_rule=size["rule"], sigma=params.get("sigma", 0.0), theta=params.get("theta"),
                   bins=params.get("bins"), seed=obj.get("seed"), mechanism=name, sep=data.get("sep"),
                   n_mc=accounting.get("n_mc", 20000), header=data.get("header"), encoding=data.get("encoding"),
                   thousands=data.get("thousands"), keep_na_text=data.get("keep_na_text", False),
                   counts_column=data.get("counts_column"), releases=accounting.get("releases", 1),
                   coarsening=tuple(ColumnTransform.from_dict(t) for t in coarsening),
                   coarsening_chosen_from_data=data.get("coarsening_chosen_from_data", False),
                   settings_chosen_from_data=data.get("settings_chosen_from_data", False),
                   # absent (recipes written before the field existed): False
                   mechanism_chosen_from_data=data.get("mechanism_chosen_from_data", False))

    @classmethod
    def from_json(cls, text: str | bytes) -> "ReleaseRecipe":
        """Parse JSON text (see :meth:`from_dict`)."""
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"the release recipe is not valid JSON: {exc}") from None
        except RecursionError:   # e.g. [[[[...]]]] thousands deep: no recipe nests more than a few levels
            raise ValueError("the release recipe is not a recipe: its JSON is nested too deeply") from None
        return cls.from_dict(obj)

    @classmethod
    def read(cls, path) -> "ReleaseRecipe":
        """Read a recipe file (e.g. ``recipe.json`` of a bundle)."""
        path = Path(path)
        if path.is_dir():
            raise ValueError(f"recipe {str(path)!r} is a directory, not a recipe file")
        if not path.exists():
            raise ValueError(f"cannot read the recipe {str(path)!r}: no such file")
        if not path.is_file():
            raise ValueError(f"recipe {str(path)!r} is not a regular file (a device or a pipe): give a recipe file")
        with path.open("rb") as handle:   # read at most the limit, whatever the file grew to since
            text = handle.read(MAX_RECIPE_BYTES + 1)
        if len(text) > MAX_RECIPE_BYTES:
            raise ValueError(f"recipe {str(path)!r} is larger than {MAX_RECIPE_BYTES // 2**20} MiB: a recipe is a "
                             "small JSON file")
        return cls.from_json(text)


# ============================================================================ running
@dataclass(frozen=True, eq=False)
class ReleaseResult:
    """A release made by :func:`run_recipe`.

    Attributes
    ----------
    recipe : ReleaseRecipe
        The recipe with its seed filled in: replaying it on the same data gives the
        same ``synthetic`` byte for byte.
    m : int
        The release size (resolved from ``recipe.size_rule``).
    m_rule : str
        How ``m`` was chosen, in words.
    synthetic : pandas.DataFrame, shape (m, d)
        The release in original units (the published table).
    is_new : ndarray of bool, shape (m,)
        Which rows are new values drawn from H (confidential: curator only).
    n_new_values : int
        Number K of distinct new values (curator only).
    prepared : core.data.PreparedData
        The prepared confidential data.
    curator_report : dict
        JSON-ready; its first key is ``"CONFIDENTIAL"``. :func:`core.release.release_report`
        plus ``release.m_chosen_by``, the full ``recipe`` and the warnings.
    public_report : dict
        JSON-ready; :func:`public_report` (no statistic of the confidential data).
    warnings : tuple of str
        Everything the curator should be told: bounds read off the data, targets
        missed, a data file that differs from the recipe's.
    """

    recipe: ReleaseRecipe
    m: int
    m_rule: str
    synthetic: pd.DataFrame
    is_new: np.ndarray
    n_new_values: int
    prepared: data_layer.PreparedData
    curator_report: dict = field(repr=False)
    public_report: dict = field(repr=False)
    warnings: tuple = ()

    def synthetic_csv(self) -> bytes:
        """The published CSV: ``synthetic.to_csv(index=False)`` in UTF-8 (the app's bytes too), with
        every text cell a spreadsheet would run as a formula neutralised (:func:`core.formatting.formula_safe`)."""
        return formula_safe(self.synthetic).to_csv(index=False).encode("utf-8")

    def confidential(self) -> pd.DataFrame:
        """The prepared confidential data in original units (after rounding and clipping)."""
        return self.prepared.to_original(self.prepared.values)


def resolve_release_size(recipe: ReleaseRecipe, multiplicities) -> tuple[int, str]:
    """The release size ``m`` of a recipe for data with these multiplicities, and the rule in words.

    ``"fixed"``: the recipe's m. Otherwise the recipe's mechanism decides
    (:meth:`core.release.mechanisms.ReleaseMechanism.release_size`). PYPP: ``"global"`` is the
    largest m whose composed global guarantee meets the target (the regime's ``largest_m``; for
    σ = 0 the exact privacy profile, docs/verdicts.md §2), a function of ``n`` alone;
    ``"instance"`` the largest m with :math:`\\delta_x(\\varepsilon)\\le\\delta` at the data. Both
    are exact (core.privacy) and capped at :data:`MAX_RECIPE_SIZE`, and both are refused when
    even m = 1 misses δ. A histogram mechanism: ``"n"`` is m = n.
    """
    if recipe.size_rule == "fixed":
        return int(recipe.m), "fixed m given in the recipe"
    return release_mechanism(recipe.mechanism).release_size(recipe, np.asarray(multiplicities))


def _resolve_data(recipe: ReleaseRecipe, data):
    """(data to prepare, label, notes): what the recipe or the caller names.

    A path, bytes or file is returned as is (it is aggregated by :func:`_prepare`);
    ``None`` becomes the recipe's sample or path.
    """
    notes: list[str] = []
    if isinstance(data, (data_layer.PreparedData, pd.DataFrame)):
        return data, recipe.source, notes
    if data is None:
        kind = recipe.source_kind
        if kind == "upload":
            raise ValueError("the recipe's data is an upload: pass the data file it was made from "
                             "(on the command line: release --recipe RECIPE.json DATA.csv)")
        if recipe.source == _FILE:
            raise ValueError("the public recipe does not name its data file: pass the data file it was made from "
                             "(on the command line: release --recipe RECIPE.json DATA.csv)")
        path = SAMPLE_DIR / recipe.source[len(_SAMPLE):] if kind == "sample" else Path(recipe.source)
        if kind == "sample" and not path.is_file():
            raise ValueError(f"the bundled sample {recipe.source[len(_SAMPLE):]!r} is not in {str(SAMPLE_DIR)!r}; "
                             "pass the data file explicitly")
        data = str(path) if kind == "path" else path
    label = str(data) if isinstance(data, (str, os.PathLike)) else recipe.source
    if isinstance(data, (str, os.PathLike)) and Path(data).is_dir():
        raise ValueError(f"{str(data)!r} is a directory, not a CSV file: give the path of the data file")
    if recipe.source.startswith(_UPLOAD + ":"):
        content = Path(data).read_bytes() if isinstance(data, (str, os.PathLike)) and Path(data).is_file() else (
            bytes(data) if isinstance(data, (bytes, bytearray, memoryview)) else None)
        if content is not None and upload_source(content) != recipe.source:
            notes.append("The data file differs from the one the recipe was made from (its SHA-256 does not "
                         "match the recipe's source): the release will differ from the recorded one.")
    return data, label, notes


def _prepare(recipe: ReleaseRecipe, data, engine: str, scheduler: str | None):
    """(prepared, label, notes, reading): the prepared data and the reader's record (or None)."""
    source, label, notes = _resolve_data(recipe, data)
    reading = None
    if isinstance(source, data_layer.PreparedData):
        specs = tuple(c.spec for c in source.column_info)
        if specs != recipe.columns:
            raise ValueError(f"the prepared data were made with other column specs than the recipe's: "
                             f"{specs!r} != {recipe.columns!r}")
        prepared = source   # made by the caller with the recipe's coarsening already applied (the app)
        notes += [f"The bounds of column {c!r} were computed from the confidential data. They are not private: "
                  "the stated differential-privacy guarantee does not cover them." for c in recipe.bounds_from_data]
        notes += _coarsening_notes(recipe)
        return prepared, label, notes, reading
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        # The app's loading: a frame is coarsened and prepared, a file aggregated.
        prepared, reading = data_layer.prepare_source(source, list(recipe.columns), counts_column=recipe.counts_column,
                                                      coarsening=recipe.coarsening, engine=engine, scheduler=scheduler,
                                                      **recipe.read_options())
    notes += [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    notes += _coarsening_notes(recipe)
    return prepared, label, notes, reading


def _coarsening_notes(recipe: ReleaseRecipe) -> list[str]:
    """The curator's warning when the coarsening was built or chosen from the data."""
    reasons = recipe.coarsening_from_data
    notes = []
    if reasons:
        notes.append(f"The coarsening depends on the confidential data ({'; '.join(reasons)}): no guarantee covers "
                     "that choice (docs/mathematics.md §3.4).")
    if recipe.settings_chosen_from_data:
        notes.append("θ (or α and the grid steps) and m were chosen with the release planner on the confidential "
                     "data: no guarantee covers that choice (docs/mathematics.md §3.6).")
    if recipe.mechanism_chosen_from_data:
        notes.append("The mechanism was chosen by comparing candidates' utility measured on the confidential data: "
                     "no guarantee covers that choice (docs/verdicts.md §7).")
    return notes


def run_recipe(recipe: ReleaseRecipe, data=None, *, command: str | None = None,
               data_label: str | None = None, engine: str = "duckdb", scheduler: str | None = None,
               reading: dict | None = None) -> ReleaseResult:
    """Run a release recipe: prepare the data, resolve m, release, report.

    Parameters
    ----------
    recipe : ReleaseRecipe
    data : None, path, glob, bytes, file-like, pandas.DataFrame or core.data.PreparedData
        The confidential data. ``None`` reads the recipe's source (a bundled sample or
        a path; an upload must be passed). A path (CSV, ``.csv.gz``, Parquet, or a glob
        of them), bytes or file-like is reduced to its frequency table by
        :func:`core.data.aggregate` with the recipe's reader options (no size limit); a
        DataFrame is coarsened (``recipe.coarsening``) and prepared with the recipe's
        columns (and ``counts_column``); a ``PreparedData`` must have been prepared with
        exactly ``recipe.columns`` after the recipe's coarsening (the app passes its
        cached one).
    command : str, optional
        The command line that regenerates the release (curator's report).
    data_label : str, optional
        How the curator's report names the data (default: the path or the source).
    engine : {'duckdb', 'dask', 'pandas'}
        How a file is aggregated (:func:`core.data.aggregate`); the table, hence the
        release, is the same with each.
    scheduler : str, optional
        Dask scheduler address (``engine='dask'``).
    reading : dict, optional
        The reader's record (``ReadDecisions.to_dict()``) when ``data`` is already
        read (the app); recorded as ``report["data"]["reading"]``.

    Returns
    -------
    ReleaseResult

    Raises
    ------
    ValueError
        Bad data or parameters, or no admissible release size.

    Notes
    -----
    The draw is the recipe's mechanism's (:meth:`core.release.mechanisms.ReleaseMechanism.release`)
    with ``numpy.random.default_rng(seed)``; for PYPP ``pypp_release(table.atoms, table.counts, σ,
    θ, m, rng, base=prepared.bases)`` mapped back with ``prepared.to_original`` — the dashboard's
    draw, so the same recipe and data give the same bytes in the app and on the command line.
    """
    if not isinstance(recipe, ReleaseRecipe):
        raise ValueError(f"recipe must be a ReleaseRecipe, got {type(recipe).__name__}")
    prepared, label, notes, read_record = _prepare(recipe, data, engine, scheduler)
    read_record = reading if read_record is None else read_record
    if recipe.seed is None:
        # Fresh entropy, recorded in the result's recipe so the release can be reproduced.
        recipe = recipe.with_seed(int(np.random.SeedSequence().entropy))
    table = prepared.table
    mechanism = release_mechanism(recipe.mechanism)
    m, m_rule = resolve_release_size(recipe, table.counts)
    draw = mechanism.release(recipe, prepared, m, np.random.default_rng(recipe.seed))
    synthetic = draw.synthetic
    copied_rows, copied_records = _unique_records_copied(synthetic,
                                                         prepared.to_original(table.atoms[table.counts == 1]))

    curator = mechanism.curator_report(
        recipe, prepared, draw, m, data_source=data_label or label, bounds_from_data=prepared.any_bounds_from_data,
        command=command, unique_rows_copied=copied_rows, unique_records_copied=copied_records)
    curator["release"]["m_chosen_by"] = m_rule
    # How the file was read (delimiter, encoding, header, engine, ...): release_report
    # does not know the reader, so the record is added here.
    curator["data"]["reading"] = read_record
    curator["data"]["missing_values"] = _missing_record(prepared)
    if prepared.dropped_columns:
        notes.append(_dropped_note(prepared))
    curator["warnings"] = list(curator["warnings"]) + notes   # release_report already warns of missed targets
    curator["recipe"] = recipe.to_dict()
    curator = {"CONFIDENTIAL": CONFIDENTIAL_MARK, **curator}
    return ReleaseResult(recipe=recipe, m=m, m_rule=m_rule, synthetic=synthetic, is_new=draw.is_new,
                         n_new_values=draw.n_new_values, prepared=prepared, curator_report=curator,
                         public_report=public_report(recipe, n=table.n, m=m, m_rule=m_rule),
                         warnings=tuple(dict.fromkeys(curator["warnings"])))


def _missing_record(prepared: data_layer.PreparedData) -> dict:
    """The curator's record of the missing cells (confidential counts): per column, the choice
    and the records concerned; the records read and those dropped before the mechanism."""
    return {"records_read": prepared.n + prepared.n_dropped, "records_dropped": prepared.n_dropped,
            "records_released_from": prepared.n,
            "columns": [{"column": c.name, "missing": c.missing,
                         ("records_dropped" if c.missing == "drop" else "missing_records"): c.n_missing}
                        for c in prepared.column_info if c.missing is not None]}


def _dropped_note(prepared: data_layer.PreparedData) -> str:
    """The curator's warning on the records dropped for a missing value (docs/mathematics.md §2.5)."""
    per_column = "; ".join(f"{c.name!r}: {c.n_missing:,}" for c in prepared.column_info if c.missing == "drop")
    return (f"{prepared.n_dropped:,} of the {prepared.n + prepared.n_dropped:,} records read were dropped before "
            f"the mechanism because of a missing value (records with a missing value, per column: {per_column}). "
            f"The guarantee is stated for the n = {prepared.n:,} records left, a number that depends on the data "
            "(docs/mathematics.md §2.5).")


def _unique_records_copied(synthetic: pd.DataFrame, unique_records: pd.DataFrame) -> tuple[int, int]:
    """(rows, records): how many release rows equal a record whose value is unique in the data,
    and how many distinct such records they copy (curator only; docs/verdicts.md §2): a hash
    join, O(m + k₁). Numeric columns are compared as floats (a release column holding new
    values is float where the data's is integer)."""
    if unique_records.empty:
        return 0, 0
    numeric = [c for c in synthetic.columns
               if pd.api.types.is_numeric_dtype(synthetic[c]) and pd.api.types.is_numeric_dtype(unique_records[c])]
    left = synthetic.astype({c: "float64" for c in numeric})
    right = unique_records.astype({c: "float64" for c in numeric}).drop_duplicates()
    joined = left.merge(right, how="inner")
    return int(joined.shape[0]), int(joined.drop_duplicates().shape[0])
