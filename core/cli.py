"""Command line: release PYPP synthetic data from a CSV file.

.. code-block:: text

    bnp-synth release DATA.csv --column C [--column C2 ...] [--categorical C ...]
        [--mechanism NAME [--bins B]] --theta T [--sigma S] [--m M | --m-rule global|instance|n] --eps E --delta D
        [--bounds LO HI ...] [--log] [--decimals D ...] [--missing [C] value|drop ...]
        [--coarsening JSON] [--seed S (a recorded seed, replayed)]
        [--sep C] [--header auto|yes|no] [--encoding E] [--thousands SEP] [--keep-na-text]
        [--counts-column C] [--engine duckdb|dask|pandas] [--scheduler ADDRESS]
        [--out synth.csv] [--public-bundle public_release.zip] [--accept-weak | --acknowledge KEY ...]
        [--report CONFIDENTIAL_report.json] [--curator-bundle CONFIDENTIAL_curator_record.zip]
        [--save-recipe CONFIDENTIAL_recipe.json] [--ledger [PATH] --dataset NAME [--accept-changed-data]]

    bnp-synth release --recipe recipe.json DATA.csv [outputs ...]
    bnp-synth release --recipe recipe.json --use-recipe-source [outputs ...]

    bnp-synth compare DATA.csv --column C [--column C2 ...] [--categorical C ...]
        [--public-categories C LIST ...] [--bounds LO HI ...] [--log] [--decimals D ...]
        --theta T --eps E --delta D [--m M | --m largest] [--mechanism NAME ...] [--peer-size m|n|both]
        [--bins B] [--runs R] [--seed S] [--sep C] [--out summary.csv]

    bnp-synth ledger PATH budget NAME --eps E [--delta D] [--by WHO]
    bnp-synth ledger PATH show [NAME] [--json]

DATA may be a CSV file, a ``.csv.gz``, a Parquet file or a quoted glob of files
(``'parts/*.parquet'``); DuckDB reduces it to the frequency table of the released columns
in bounded memory (``--engine dask --scheduler tcp://host:8786`` computes it on a Dask
cluster; ``--engine pandas`` reads the whole file in memory). With ``--counts-column C``
DATA is itself a frequency table (value(s), count). How the file was read is printed on
stderr (``note: ...``) and recorded in the report (``data.reading``).

``--mechanism NAME`` releases with another mechanism than PYPP (AIM, MST, the OpenDP and the seed
papers' histograms, :mod:`core.release.mechanisms`): it needs public bounds (``--bounds``) and
public category lists (``--public-categories``) for every column, ``--bins`` numeric bins (default
25) and no ``--sigma``/``--theta``; its release size defaults to m = n. It goes through the same
verdict, gate, card, curator record, replay and ledger as PYPP.

(``python -m core`` is the same program.) The flags build a
:class:`core.release.ReleaseRecipe`, or ``--recipe`` reads one (a bundle's recipe). A recipe
never chooses which file is read: the data are DATA.csv, given on the command line, or a
bundled sample the recipe names; a file path written in the recipe is read only when the
user confirms it with ``--use-recipe-source`` (a recipe from elsewhere naming
``/etc/passwd`` would otherwise copy it into the public release).

The release's randomness is secret: without ``--seed`` a fresh 128-bit seed is drawn from the
operating system's CSPRNG (:func:`core.release.run_recipe`) and recorded only in the
CONFIDENTIAL outputs. ``--seed`` replays a recorded seed; given with a public output it draws a
warning (:data:`GUESSABLE_SEED`): anyone with the seed and all records but one can recompute
the release for each candidate value of the last record (docs/serving.md §5).

The public outputs, ``--out`` (the synthetic CSV) and ``--public-bundle``, pass the same gate
(:func:`core.release.gate.check_publication`): a release that misses its target is refused
and one that is weak needs ``--accept-weak``, and each choice the data made (bounds or precision
read off the data, planner settings, coarsening, dropped records, an instance-level m) its own
``--acknowledge KEY``; refused, the command ends with exit status 2, names the flags asked and
writes nothing. With ``--ledger [PATH] --dataset NAME`` a release with a public output is first
charged to the dataset's privacy budget (:mod:`core.ledger.cli`, docs/audit.md §8): over budget it
is refused the same way, with the remaining budget on stderr. Outputs are never written through a symbolic link, never over an input (DATA, any file of
its glob, the recipe), and CONFIDENTIAL outputs (``--report``, ``--curator-bundle``,
``--save-recipe``, ``compare --out``) are created readable by their owner only (mode 0600);
:func:`core.release.write_output` writes them all. Every CSV written has its text cells
guarded against spreadsheet formulas (:func:`core.formatting.formula_safe`). :func:`core.release.run_recipe`
draws the release — the same function and the same bytes as the dashboard — and
:mod:`core.release.bundle` writes the public release and the curator's record as two zip files.
``--report`` is the curator's JSON report (instance-level guarantees, k, singletons:
confidential). Every guarantee that misses the δ target, and every choice that weakens
one (bounds read off the data), is named on stderr (``warning: ...``) and in the
report's ``warnings``.

Bad input (a missing file, a directory, a column that does not exist, NaNs,
out-of-range parameters, a release too large to write, …) ends with
``error: <what to fix>`` on stderr and exit status 2, never a traceback. The
mathematics is explained in the project's ``docs/mathematics.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import json
import os
import re
import shlex
import sys
import textwrap
from pathlib import Path

from . import data as data_layer
from .data import ColumnTransform
from .release import (
    CURATOR_BUNDLE_NAME,
    MAX_RECIPE_SIZE,
    SAMPLE_DIR,
    ReleaseRecipe,
    public_source,
    run_recipe,
    sample_source,
    write_bundles,
    write_output,
)
from .formatting import formula_safe
from .mechanisms.peers import peer_entries
from .privacy import regime_of
from .release.gate import ACKNOWLEDGEMENTS, AcknowledgementRequired, check_publication
from .release.bundle import public_bundle, public_summary, record_figures
from .release.mechanisms import DEFAULT_BINS, RELEASE_MECHANISMS, mechanism_lines, release_mechanism
from .ledger.cli import add_ledger_parser, add_release_options, reserve_release, run_ledger

__all__ = ["GUESSABLE_SEED", "build_parser", "main", "recipe_from_args", "run_compare", "run_release"]

PROG = "python -m core"
DOCS = "docs/mathematics.md"

#: Why a seed a person chose (typed in the app, ``--seed`` here) must stay as secret as the
#: data: said wherever one meets a public output (docs/serving.md §5).
GUESSABLE_SEED = ("a guessable seed is a published seed: anyone with the seed and all records but one can "
                  "recompute the release for each candidate value of the last record")

# argparse takes "-1e-300" for an option (its negative-number pattern has no exponent);
# this one also accepts scientific notation and -inf, so that validation can answer.
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-inf(inity)?$", re.IGNORECASE)

# Options that define a recipe: with --recipe, the recipe defines them instead.
_RECIPE_OPTIONS = ("column", "categorical", "mechanism", "bins", "sigma", "theta", "m", "m_rule", "eps", "delta",
                   "bounds", "log",
                   "decimals", "sep", "seed", "header", "encoding", "thousands", "keep_na_text", "counts_column",
                   "releases", "coarsening", "grid", "public_categories", "missing", "decimals_from_data")
_HEADER_CHOICES = {"auto": None, "yes": True, "no": False}


class UsageError(ValueError):
    """A command-line mistake (reported with the usage line)."""


def _program_name() -> str:
    """``bnp-synth`` when run as the installed script, ``python -m core`` otherwise."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return PROG if name in ("", "__main__.py", "-c", "-m") or name.endswith(".py") else name


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Private synthetic data with the Pitman-Yor posterior-predictive mechanism.",
        epilog=f"The mathematics (mechanism, guarantees, how they are tested) is in {DOCS} of bnp-synth.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    release = commands.add_parser(
        "release", help="release m synthetic rows of a CSV file",
        # raw: the list of mechanisms below keeps one line each; the paragraphs are wrapped here
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "Release m synthetic rows of the chosen columns of DATA.csv with the PYPP mechanism (or another, "
            "--mechanism) and state its privacy guarantees: the public release (synthetic data, public recipe, the "
            "global guarantee) and the curator's record (instance-level guarantees and comparisons with the "
            "confidential data, marked CONFIDENTIAL) are written to separate files.", break_on_hyphens=False),
        epilog=textwrap.fill(
            "Numeric transforms, in this order and in original units: --decimals (rounding), clipping to "
            "--bounds, --log, scaling to [0, 1] with the bounds. Bounds are public knowledge: without --bounds "
            "they are read off the data, which the guarantee does not cover (a warning says so). A recipe "
            "(--save-recipe, or recipe.json in a bundle) replays the release byte for byte with --recipe. "
            f"At most {MAX_RECIPE_SIZE:,} synthetic rows. The mathematics is in {DOCS} and docs/verdicts.md §6.",
            break_on_hyphens=False)
        + "\n\n" + textwrap.fill("mechanisms (--mechanism NAME; all but pypp need --bounds and --public-categories "
                                  "for every column, take --bins and release m = n by default):",
                                  break_on_hyphens=False)
        + "\n" + "\n".join("  " + line for line in mechanism_lines()))
    for p in (parser, release):
        p._negative_number_matcher = _NEGATIVE_NUMBER
    release.add_argument("data", metavar="DATA.csv", nargs="?",
                         help="input CSV (.csv, .csv.gz) or Parquet file, or a quoted glob of files (with --recipe: "
                              "the data the recipe is run on)")
    release.add_argument("--recipe", metavar="recipe.json",
                         help="read the release recipe (columns, transforms, parameters, seed) from this JSON file "
                              "instead of the options below; give DATA.csv too, unless the recipe names a bundled "
                              "sample (or see --use-recipe-source)")
    release.add_argument("--use-recipe-source", action="store_true",
                         help="with --recipe and no DATA.csv: read the data file whose path the recipe names (a "
                              "recipe never chooses the file read without this confirmation)")
    spec = release.add_argument_group("recipe options (without --recipe)")
    spec.add_argument("--column", action="append", default=None, metavar="C",
                      help="column to release (repeat for several; a row is one atom)")
    spec.add_argument("--categorical", action="append", default=None, metavar="C",
                      help="treat column C as categorical (added to the columns if not given with --column)")
    spec.add_argument("--mechanism", choices=tuple(RELEASE_MECHANISMS), default=None, metavar="NAME",
                      help="the release mechanism (default pypp; each is listed below with its reference). Every "
                           "one passes the same verdict, gate, card, ledger and replay; all but pypp need public "
                           "bounds and category lists for every column and release m = n rows by default")
    spec.add_argument("--bins", type=int, default=None, metavar="B",
                      help=f"with a --mechanism other than pypp: bins per numeric axis (public; default {DEFAULT_BINS})")
    spec.add_argument("--sigma", type=float,
                      help="PY discount: 0 (Dirichlet process, default), in (0, 1), or -A < 0: the "
                           "Dirichlet-multinomial with alpha = A over the public domain of the columns (--grid, "
                           "--public-categories), globally pure eps-DP; theta = z*A (z = domain size) when --theta "
                           "is not given")
    spec.add_argument("--theta", type=float, help="PY strength theta > -sigma (required unless sigma < 0)")
    spec.add_argument("--m", type=int,
                      help=f"number of synthetic rows, 1 to {MAX_RECIPE_SIZE:,} (default: the largest m admissible "
                           "at --eps, --delta for sigma = 0; the largest globally pure m for sigma < 0)")
    spec.add_argument("--m-rule", choices=("global", "instance", "n"),
                      help="without --m: the largest m under the exact global guarantee (global, default for pypp) or "
                           "under the instance-level guarantee at this dataset (instance; depends on the data); n: "
                           "m = n, the number of records (default for the other mechanisms)")
    spec.add_argument("--eps", type=float, help="(required) epsilon > 0 at which the guarantees are stated")
    spec.add_argument("--delta", type=float, help="target delta in (0, 1) the guarantees are compared with "
                                                   "(required unless sigma < 0, whose delta = 0 meets any target)")
    spec.add_argument("--bounds", action="append", nargs=2, type=float, default=None, metavar=("LO", "HI"),
                      help="public bounds in original units, once per numeric column, in column order")
    spec.add_argument("--log", action="store_true", default=None, help="log-transform every numeric column")
    spec.add_argument("--decimals", action="append", type=int, default=None, metavar="D",
                      help="round numeric values to D decimals (negative: tens, hundreds, ...), before the other "
                           "transforms and on output; once for all numeric columns or once per numeric column "
                           "(default: no rounding, new values at full precision: the output precision is public)")
    spec.add_argument("--decimals-from-data", action="store_true", default=None,
                      help="round the new values of every numeric column without --decimals or --grid to the "
                           "decimals its values were recorded with: read off the confidential data, a data-dependent "
                           "choice the public report names (docs/mathematics.md §2.4)")
    spec.add_argument("--grid", action="append", type=float, default=None, metavar="STEP",
                      help="public grid step of a numeric column (needs --bounds; in log units with --log): each "
                           "value becomes its nearest grid point LO + j*STEP and the column is categorical over those "
                           "public points; once per numeric column, in column order")
    spec.add_argument("--public-categories", action="append", nargs=2, default=None, metavar=("C", "A,B,..."),
                      help="the public category list of categorical column C, comma-separated (repeatable; fixed "
                           "without looking at the data)")
    spec.add_argument("--missing", action="append", nargs="+", default=None, metavar="[C] value|drop",
                      help="what a missing cell means: 'value' (one more value, released as an empty cell) or "
                           "'drop' (drop the records with a missing cell before the mechanism; n then depends on the "
                           "data, and the reports say so). '--missing value' applies to every released column, "
                           "'--missing C drop' to column C (repeatable; a column's own choice wins). Without it a "
                           "column with missing cells is refused")
    reading = release.add_argument_group("reading DATA (without --recipe; the recipe records them)")
    reading.add_argument("--sep", help="field separator of a CSV file (default: detected among comma, semicolon, "
                                       "tab and pipe, and said on stderr)")
    reading.add_argument("--header", choices=tuple(_HEADER_CHOICES), default=None,
                         help="whether the first row names the columns (default auto: decided, and a warning when "
                              "the first row was kept as data)")
    reading.add_argument("--encoding", help="text encoding, e.g. utf-8, latin-1, cp1252, utf-16 (default: detected)")
    reading.add_argument("--thousands", metavar="SEP",
                         help="thousands separator to remove from numbers grouped by threes, e.g. ',' for 1,234,567 "
                              "(default: none)")
    reading.add_argument("--keep-na-text", action="store_true", default=None,
                         help="keep cells such as NA or NULL as category labels (default: missing values)")
    reading.add_argument("--counts-column", metavar="C",
                         help="DATA is a frequency table: column C holds how many records have each row's value(s) "
                              "(aggregated by the custodian; the raw records never reach this tool)")
    engine = release.add_argument_group("engine (how DATA is reduced to its frequency table)")
    engine.add_argument("--engine", choices=data_layer.ENGINES, default="duckdb",
                        help="duckdb (default: streaming, bounded memory; CSV, .csv.gz, Parquet, globs), dask (a "
                             "Dask cluster, see --scheduler) or pandas (the whole file in memory)")
    engine.add_argument("--scheduler", metavar="ADDRESS",
                        help="with --engine dask: address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 "
                             "(default: Dask threads on this machine)")
    spec.add_argument("--seed", type=int,
                      help="replay a recorded seed (integer >= 0). Without it (the default, and the only choice for "
                           "a release to publish) a fresh secret seed is drawn from the operating system's CSPRNG and "
                           "recorded in the CONFIDENTIAL outputs only: " + GUESSABLE_SEED)
    spec.add_argument("--releases", type=int, metavar="K",
                      help="how many independent releases of this kind you plan from the same data (1-1000, "
                           "default 1): the curator's report adds their composed guarantee")
    spec.add_argument("--coarsening", metavar="JSON",
                      help="coarsening applied to the rows before the transforms, as in a recipe: a JSON list of "
                           "transforms, e.g. '[{\"column\": \"wage\", \"kind\": \"signif\", \"digits\": 2}]' "
                           "(kinds: round, signif, log_round, clip, keep, min_count; docs/mathematics.md §3.5)")
    out = release.add_argument_group("outputs (at least one of --out, --public-bundle, --curator-bundle, --report "
                                     "FILE, --save-recipe)")
    out.add_argument("--out", metavar="synth.csv",
                     help="where to write the synthetic CSV: public, so behind the same gate as --public-bundle (a "
                          "missed release is refused, a weak one needs --accept-weak, each choice made on the data its own "
                          "--acknowledge KEY)")
    out.add_argument("--report", metavar="CONFIDENTIAL_report.json",
                     help="where to write the curator's JSON report (CONFIDENTIAL: instance-level guarantees, k, "
                          "singletons, the seed); '-' prints it on stdout (with a warning). Without it the report "
                          "is not written and a short public summary is printed")
    out.add_argument("--public-bundle", metavar="public_release.zip",
                     help="zip of the public release: synthetic.csv, recipe.json without seed or local paths, "
                          "release.json and README.txt with the global guarantee")
    out.add_argument("--accept-weak", action="store_true",
                     help="accept a weak guarantee (n·delta > 0.01) for --out and --public-bundle (the same as "
                          "--acknowledge weak); recorded in release.json as 'acknowledged' (a missed target is always "
                          "refused)")
    out.add_argument("--acknowledge", action="append", default=None, metavar="KEY", choices=tuple(ACKNOWLEDGEMENTS),
                     help="accept one thing the gate asks, by its key (repeatable; each choice made on the confidential "
                          "data needs its own): " + ", ".join(ACKNOWLEDGEMENTS))
    out.add_argument("--curator-bundle", metavar=CURATOR_BUNDLE_NAME,
                     help="zip of the curator's record (CONFIDENTIAL): report, full recipe with seed, summary "
                          "table, figures")
    out.add_argument("--save-recipe", metavar="CONFIDENTIAL_recipe.json",
                     help="write the recipe with its seed and data path, for --recipe (CONFIDENTIAL: the seed "
                          "recomputes the release; marked so on its first key)")
    add_release_options(release)
    release.set_defaults(command_parser=release)
    _add_compare_parser(commands)
    add_ledger_parser(commands)
    return parser


def _add_compare_parser(commands) -> None:
    """``compare``: every mechanism calibrated to one (ε, δ) and m, R runs each."""
    from .evaluation.compare import ALL_MECHANISMS, DEFAULT_MECHANISMS, KNOWN_MECHANISMS, PEER_MECHANISMS

    cmp = commands.add_parser(
        "compare", help="compare the mechanisms at one (eps, delta) and release size m",
        description="Calibrate mechanisms to one (eps, delta) and m, run each --runs times on the chosen columns "
                    "of DATA.csv (numeric columns scaled to [0, 1] with --bounds, categorical ones with --categorical) "
                    "and print the calibration (each guarantee in words, whether it meets the target) and, per "
                    "mechanism, its guarantee, release size m, the mean W1 in original units, KDE-L2 and summaries of "
                    "each numeric column, the total variation (TV) of each categorical one, the seconds per release "
                    "and the yardsticks (the 3-way marginal score with its subsample reference, unique exact match, "
                    "row match share, the logistic pMSE with its null reference and pMSE ratio; SDNist's own "
                    "k-marginal and pMSE). The histogram baselines and the peers work on numeric bins "
                    "times the public categories: a categorical column needs --public-categories for them. A "
                    "mechanism named with --mechanism that cannot run is an error naming what is missing; of the "
                    "default list, what cannot run is skipped (said on stderr), e.g. PYPP when no m is admissible "
                    "at --delta (the others then run at m = n). "
                    "CONFIDENTIAL: the output compares the releases with the data.",
        epilog=f"Mechanisms (--mechanism NAME, repeatable; default: {', '.join(DEFAULT_MECHANISMS)}): "
               f"{', '.join(ALL_MECHANISMS)}; the field's peers (calibrated by OpenDP, docs/peers.md): "
               f"{', '.join(PEER_MECHANISMS)} (AIM and MST refit on every run: lower --runs). The pseudo-posterior's "
               f"guarantee is local (computed from the data) and never meets a target. The mathematics is in {DOCS}, "
               "docs/bayesian_family.md and docs/peers.md.")
    cmp._negative_number_matcher = _NEGATIVE_NUMBER
    cmp.add_argument("data", metavar="DATA.csv", help="input CSV file")
    cmp.add_argument("--column", action="append", default=None, metavar="C", help="column to compare (repeatable)")
    cmp.add_argument("--categorical", action="append", default=None, metavar="C",
                     help="treat column C as categorical (added to the columns if not given with --column)")
    cmp.add_argument("--public-categories", action="append", nargs=2, default=None, metavar=("C", "A,B,..."),
                     help="the public category list of categorical column C, comma-separated (repeatable; fixed "
                          "without looking at the data): the histogram baselines need it")
    cmp.add_argument("--bounds", action="append", nargs=2, type=float, default=None, metavar=("LO", "HI"),
                     help="public bounds in original units, once per numeric column (default: read off the data, "
                          "which no guarantee covers)")
    cmp.add_argument("--log", action="store_true", default=None, help="log-transform every numeric column")
    cmp.add_argument("--decimals", action="append", type=int, default=None, metavar="D",
                     help="round to D decimals first (once, or once per numeric column)")
    cmp.add_argument("--theta", type=float, required=True, help="PYPP strength theta > 0 (sigma = 0)")
    cmp.add_argument("--eps", type=float, required=True, help="target epsilon > 0")
    cmp.add_argument("--delta", type=float, required=True, help="target delta in (0, 1)")
    cmp.add_argument("--m", default="largest",
                     help="release size, or 'largest' (default: the largest m admissible for PYPP under its exact "
                          "global profile)")
    cmp.add_argument("--mechanism", action="append", choices=KNOWN_MECHANISMS, default=None, metavar="NAME",
                     help="mechanism to run (repeatable): " + ", ".join(KNOWN_MECHANISMS))
    cmp.add_argument("--peer-size", choices=("m", "n", "both"), default="both",
                     help="release size of each peer named without _at_n: the common m, its natural m = n, or both "
                          "(default)")
    cmp.add_argument("--bins", type=int, default=25, help="histogram bins per axis (default 25)")
    cmp.add_argument("--runs", type=int, default=100, help="repetitions R per mechanism (default 100)")
    cmp.add_argument("--seed", type=int, default=0, help="seed of the comparison (default 0)")
    cmp.add_argument("--sep", help="field separator (default: detected)")
    cmp.add_argument("--out", metavar="summary.csv", help="write the summary table here (default: stdout)")
    cmp.set_defaults(command_parser=cmp, grid=None)


def run_compare(args: argparse.Namespace) -> int:
    """Run ``compare`` with parsed arguments; raises ValueError on bad input (no math here:
    :func:`core.evaluation.compare.calibrate`, :func:`~core.evaluation.compare.run_comparison`, :func:`~core.evaluation.compare.comparison_summary`)."""
    import numpy as np

    from .evaluation import compare as core_compare
    from .evaluation.columns import comparison_table

    m = args.m if args.m == "largest" else _int_option("--m", args.m)
    if args.out is not None:
        _check_output_path("--out", args.out, _inputs(args.data))
    prepared = data_layer.prepare(data_layer.read_csv(args.data, sep=args.sep), _column_specs(args))
    mechanisms = peer_entries(args.mechanism or core_compare.DEFAULT_MECHANISMS, args.peer_size)
    # the frequency table on the unit box with each column's public domain (cost in k, not n)
    table = comparison_table(prepared)
    try:
        # mechanisms named on the command line must run (an error naming what is missing);
        # of the default list, what cannot run is skipped and said below
        cal = core_compare.calibrate(prepared.n, args.eps, args.delta, m, theta=args.theta, d=prepared.d,
                                     bins=args.bins, mechanisms=mechanisms,
                                     bounds_from_data=prepared.any_bounds_from_data, levels=table.levels,
                                     unlisted=table.unlisted, required=mechanisms if args.mechanism else ())
    except ValueError as exc:
        if table.unlisted and "public category list" in str(exc):
            raise UsageError(f"{exc}: e.g. --public-categories {table.unlisted[0]} A,B,C") from None
        raise
    results = core_compare.run_comparison(table, cal, runs=args.runs, rng=np.random.default_rng(args.seed),
                                          yardsticks=True)
    summary = core_compare.comparison_summary(results)
    for key, why in cal.skipped.items():
        fix = (": give " + " ".join(f"--public-categories {c} LIST" for c in table.unlisted)
               if "public category list" in why else "")
        print(f"note: skipped {key}: {why}{fix}", file=sys.stderr)
    for note in cal.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"calibration at eps = {cal.eps:g}, delta = {cal.delta:g}, m = {cal.m} ({cal.m_rule}):", file=sys.stderr)
    for mech in cal.mechanisms:
        row = cal.table[cal.table.mechanism == mech.name].iloc[0]
        verdict = "meets the target" if row["meets_target"] else "does NOT meet the target"
        print(f"  {mech.name}: {row['guarantee']} -- {verdict}" + (f" ({row['caveat']})" if row["caveat"] else ""),
              file=sys.stderr)
    _print_results(summary, cal, args.runs)
    if prepared.any_bounds_from_data:
        print("warning: bounds read off the data: no guarantee covers them; give --bounds", file=sys.stderr)
    text = formula_safe(summary).to_csv(index=False)
    if args.out is not None:   # CONFIDENTIAL: the comparison is computed on the data
        write_output(args.out, text.encode("utf-8"), confidential=True)
    else:
        sys.stdout.write(text)
    return 0


def _print_results(summary, cal, runs: int) -> None:
    """Per mechanism on stderr: guarantee, m, seconds per release, mean W1 / TV per column, the 3-way
    marginal score (reference), UEM, the pMSE ratio, SDNist's k-marginal (CONFIDENTIAL: computed
    against the data)."""
    print(f"results (mean over {runs} runs; CONFIDENTIAL: compared with the data):", file=sys.stderr)
    for mech in cal.mechanisms:
        rows = summary[summary["mechanism"] == mech.name]
        parts = []
        for row in rows.itertuples():
            metric, value = ("TV", row.TV) if row.TV == row.TV else ("W1", row.W1)
            parts.append(f"{metric}[{row.column}] = {value:.4g}")
        first = rows.iloc[0]
        uem = "n/a" if first["UEM"] != first["UEM"] else f"{100 * first['UEM']:.1f}%"
        print(f"  {mech.name}: {mech.guarantee.label}; m = {int(first['m']):,}; {first['seconds']:.3g} s/release; "
              + ", ".join(parts)
              + f"; 3-way marginal {first['marginal3']:.0f} (subsample of m: {first['marginal3_reference']:.0f}); "
              f"UEM {uem}; pMSE ratio {first['pMSE_ratio']:.3g} (pMSE {first['pMSE_logistic']:.2g}, null "
              f"{first['pMSE_null']:.2g}); SDNist k-marginal {first['SDNist_k_marginal']:.0f}", file=sys.stderr)


def _int_option(flag: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"{flag} must be an integer or 'largest', got {value!r}") from None


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m core`` and of the ``bnp-synth`` script; returns the exit status."""
    prog = _program_name() if argv is None else PROG
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        if args.command == "compare":
            return run_compare(args)
        if args.command == "ledger":
            return run_ledger(args)
        return run_release(args, sys.argv[1:] if argv is None else argv, prog=prog)
    except ValueError as exc:  # bad input: a message and exit status 2, not a traceback
        args.command_parser.error(str(exc))
    except RecursionError:   # a pathological input nested beyond Python's stack (e.g. in --coarsening)
        args.command_parser.error("an input is nested too deeply to be read (a recipe or JSON option is a few "
                                  "levels deep)")
    except OSError as exc:  # e.g. a file that cannot be written
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        args.command_parser.error(f"{exc.strerror or exc}{where}")


def run_release(args: argparse.Namespace, argv: list[str] | None = None, *, prog: str = PROG) -> int:
    """Run ``release`` with parsed arguments; raises ValueError on bad input.

    ``argv`` (the arguments after the program name) is recorded in the curator's report
    as the command that regenerates the release.
    """
    if args.recipe is not None:
        given = [f"--{name.replace('_', '-')}" for name in _RECIPE_OPTIONS if getattr(args, name) is not None]
        if given:
            raise UsageError(f"--recipe fixes the columns, transforms, parameters and seed: drop "
                             f"{', '.join(given)} (only DATA.csv may be given: the data the recipe is run on)")
        recipe = ReleaseRecipe.read(args.recipe)
        data = _recipe_data(recipe, args)
    else:
        if args.use_recipe_source:
            raise UsageError("--use-recipe-source confirms the data file a recipe names: it needs --recipe")
        recipe = recipe_from_args(args)
        data = args.data
    read = (str(SAMPLE_DIR / recipe.source.split(":", 1)[1]) if data is None and recipe.source_kind == "sample"
            else data)
    outputs = _check_outputs(args, _inputs(read) + _inputs(args.recipe))
    if data is not None and Path(data).is_dir():
        raise UsageError(f"DATA.csv {data!r} is a directory, not a CSV file: give the path of the data file")

    if args.scheduler is not None and args.engine != "dask":
        raise UsageError("--scheduler is the address of a Dask scheduler: it needs --engine dask")
    public_outputs = [flag for flag, path in (("--out", args.out), ("--public-bundle", args.public_bundle))
                      if path is not None]
    if args.seed is not None and public_outputs:
        print(f"warning: --seed {args.seed} with a public output ({', '.join(public_outputs)}): {GUESSABLE_SEED}. "
              "Leave --seed out to draw a secret seed (it is recorded in --report, --curator-bundle and "
              "--save-recipe, which are CONFIDENTIAL).", file=sys.stderr)
    command = list(argv or [])
    result = run_recipe(recipe, data, data_label=None if data is None else str(data),
                        engine=args.engine, scheduler=args.scheduler)
    if args.recipe is None and recipe.seed is None:
        command += ["--seed", str(result.recipe.seed)]  # the drawn seed makes the command reproduce the release
    report = result.curator_report
    report["command"] = shlex.join([*prog.split(), *command])
    report["release"]["output"] = None if args.out is None else str(args.out)
    acknowledged = ()
    if public_outputs:   # one gate for every public output, before anything is written
        wanted = tuple(args.acknowledge or ()) + (("weak",) if args.accept_weak else ())
        try:
            acknowledged = tuple(check_publication(result.public_report, wanted))
        except AcknowledgementRequired as exc:
            keys = " ".join(f"--acknowledge {key}" for key in exc.missing) + (
                " (--accept-weak is --acknowledge weak)" if "weak" in exc.missing else "")
            raise UsageError(f"{exc} Nothing was written. Give {keys} to accept this and record it in "
                             "release.json.") from None

    # charged to the ledger before any byte is written; over budget: refused, nothing written
    reservation = reserve_release(args, result, bool(public_outputs))
    with reservation or contextlib.nullcontext():   # an error from here on leaves the record incomplete, counted
        digest = None
        if args.out is not None:
            payload = result.synthetic_csv()
            write_output(args.out, payload, confidential=False)
            digest = hashlib.sha256(payload).hexdigest()
        if args.public_bundle is not None:
            payload = public_bundle(result, acknowledged=acknowledged,
                                    ledger=None if reservation is None else reservation.block)
            write_output(args.public_bundle, payload, confidential=False)
            digest = hashlib.sha256(payload).hexdigest()   # the bundle's, when there is one
        if reservation is not None:
            reservation.complete(digest)
            block = reservation.block
            print(f"ledger: release {block['release_index']} of dataset {block['dataset']!r}; cumulative eps = "
                  f"{block['cumulative']['eps']:.6g}, delta = {block['cumulative']['delta']:.6g} of the budget eps = "
                  f"{block['budget']['eps']:g}, delta = {block['budget']['delta']:g}", file=sys.stderr)
    if args.curator_bundle is not None:
        write_bundles(result, curator_path=args.curator_bundle, figures=record_figures(result))
    if args.save_recipe is not None:   # CONFIDENTIAL: the seed recomputes the release
        write_output(args.save_recipe, result.recipe.to_json(confidential=True).encode("utf-8"), confidential=True)
    text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if args.report == "-":   # escaped: a terminal's encoding may not have ε and δ
        print("warning: the curator's report on stdout is CONFIDENTIAL (it holds the seed and statistics of the "
              "data): do not log or publish it", file=sys.stderr)
        print(json.dumps(report, indent=2))
    elif args.report:
        write_output(args.report, text.encode("utf-8"), confidential=True)
    else:
        print(public_summary(result.public_report))
    reading = report["data"].get("reading") or {}
    for note in reading.get("notes", []):
        print(f"note: {note}", file=sys.stderr)
    if reading.get("header_guessed") and reading.get("first_row_looks_like_data"):
        print("warning: the first row looks like data, so it was kept as the first record and the columns are "
              "named column_1, column_2, ...; if it holds the column names, run again with --header yes",
              file=sys.stderr)
    for message in result.warnings:
        print(f"warning: {message}", file=sys.stderr)
    statistics = "the secret seed and statistics of the confidential data"
    for flag, path, example, holds in (
            ("--report", args.report, "CONFIDENTIAL_report.json", statistics),
            ("--curator-bundle", args.curator_bundle, CURATOR_BUNDLE_NAME, statistics),
            ("--save-recipe", args.save_recipe, "CONFIDENTIAL_recipe.json", "the secret seed, which recomputes the "
                                                                            "release from the data")):
        if path not in (None, "-") and "CONFIDENTIAL" not in Path(path).name.upper():
            print(f"warning: {flag} {path} holds {holds} (its content is marked CONFIDENTIAL); name it so (e.g. "
                  f"{example}) and do not publish it", file=sys.stderr)
    # The seed is never printed (a terminal or a CI log is no place for it): the CONFIDENTIAL outputs record it.
    recorded = [flag for flag, path in (("--report", args.report), ("--curator-bundle", args.curator_bundle),
                                        ("--save-recipe", args.save_recipe)) if path is not None]
    print(f"released m = {result.m} synthetic rows of {', '.join(map(str, result.prepared.columns))} to "
          f"{', '.join(outputs)}" + (f" (seed recorded by {', '.join(recorded)} only)" if recorded else
             " (its secret seed is recorded nowhere, so it cannot be replayed: give --report, --curator-bundle or "
             "--save-recipe to keep it)" if args.seed is None and args.recipe is None else ""), file=sys.stderr)
    return 0


def _recipe_data(recipe: ReleaseRecipe, args: argparse.Namespace) -> str | None:
    """The data a ``--recipe`` release reads: DATA.csv from the command line; else ``None`` for
    a bundled sample or an upload (:func:`core.release.run_recipe` finds the sample, or asks
    for the upload's file); else the recipe's file path, only with ``--use-recipe-source``."""
    if args.data is not None:
        if args.use_recipe_source:
            raise UsageError("give either DATA.csv or --use-recipe-source (the file the recipe names), not both")
        return args.data
    if recipe.source_kind != "path" or recipe.source == public_source(recipe.source):
        return None   # a bundled sample by name, an upload or a public recipe: run_recipe says what it needs
    if not args.use_recipe_source:
        raise UsageError(f"the recipe names its data file {recipe.source!r}, and a recipe never chooses which file "
                         "is read: give the data file on the command line (release --recipe RECIPE.json DATA.csv), "
                         "or confirm the recipe's file with --use-recipe-source")
    print(f"note: reading the data file the recipe names (confirmed with --use-recipe-source): {recipe.source}",
          file=sys.stderr)
    return recipe.source


def _inputs(path: str | None) -> list[Path]:
    """The files an input argument reads: the file, or every file its glob matches."""
    if path is None:
        return []
    matches = glob.glob(path) if glob.has_magic(path) else [path]
    return [Path(p) for p in matches]


def _same_file(output: Path, source: Path) -> bool:
    """Whether writing ``output`` would overwrite ``source`` (the same path, or a hard or
    symbolic link to the same file)."""
    if output.resolve() == source.resolve():
        return True
    try:
        return os.path.samefile(output, source)
    except OSError:   # one of them does not exist (yet)
        return False


def _check_output_path(flag: str, path: str, inputs: list[Path]) -> Path:
    """One output path: its directory exists, it is not a directory, not a symbolic link (an
    output is never written through one) and not an input; returns it resolved."""
    resolved = Path(path).resolve()
    if not resolved.parent.is_dir():
        raise UsageError(f"{flag} {path}: the directory {str(resolved.parent)!r} does not exist")
    if Path(path).is_symlink():
        raise UsageError(f"{flag} {path} is a symbolic link: an output is never written through one (it could "
                         "point at the confidential data); remove it or give another file name")
    if resolved.is_dir():
        raise UsageError(f"{flag} {path} is a directory: give a file name")
    for source in inputs:
        if _same_file(Path(path), source):
            raise UsageError(f"{flag} {path} would overwrite the input {str(source)!r}: give the output its own "
                             "file name")
    return resolved


def _check_outputs(args: argparse.Namespace, inputs: list[Path]) -> list[str]:
    """Every output's directory exists, no output is an input, a symbolic link or a directory,
    and no two outputs are one file; returns their names."""
    outputs = [p for p in (args.out, args.public_bundle, args.curator_bundle, args.save_recipe) if p is not None]
    outputs += [args.report] if args.report not in (None, "-") else []
    if not outputs:   # the CONFIDENTIAL report or recipe alone will do: a missed release writes no public file
        raise UsageError("nothing to write: give --out synth.csv, --public-bundle ZIP, --curator-bundle ZIP, "
                         "--report FILE and/or --save-recipe FILE")
    paths = {}
    for option in ("out", "report", "public_bundle", "curator_bundle", "save_recipe"):
        path = getattr(args, option)
        if path is None or (option == "report" and path == "-"):
            continue
        flag = f"--{option.replace('_', '-')}"
        resolved = _check_output_path(flag, path, inputs)
        if resolved in paths:
            raise UsageError(f"{flag} and {paths[resolved]} name the same file {path!r}: give each output its own")
        paths[resolved] = flag
    return [str(p) for p in outputs]


def recipe_from_args(args: argparse.Namespace) -> ReleaseRecipe:
    """The :class:`~core.release.ReleaseRecipe` the flags describe (validated)."""
    if args.data is None:
        raise UsageError("give the data file DATA.csv (or --recipe recipe.json)")
    mechanism = release_mechanism(args.mechanism or "pypp")
    # each mechanism takes its own parameters (PYPP: --sigma, --theta; a histogram: --bins)
    foreign = [f"--{name}" for name in ("sigma", "theta", "bins")
               if getattr(args, name) is not None and name not in mechanism.parameters]
    if foreign:
        raise UsageError(f"{', '.join(foreign)} do not apply to --mechanism {mechanism.key} (its parameters: "
                         f"{', '.join('--' + p for p in mechanism.parameters)})")
    sigma = 0.0 if args.sigma is None and "sigma" in mechanism.parameters else args.sigma
    if "theta" in mechanism.parameters and args.theta is None and not sigma < 0:
        raise UsageError("missing --theta: the PY strength theta > -sigma")
    needs_delta = mechanism.delta_required({} if sigma is None else {"sigma": sigma})
    if args.eps is None or (args.delta is None and needs_delta):
        missing = " and ".join(f"--{name}" for name in ("eps", "delta") if getattr(args, name) is None)
        raise UsageError(f"missing {missing}: the report states each guarantee at --eps and compares it with "
                         "the target --delta; with --eps and --delta alone the largest admissible m is released")
    if args.m is not None and args.m_rule is not None:
        raise UsageError("give either --m (a fixed release size) or --m-rule (the largest admissible m), not both")
    rule = args.m_rule or mechanism.default_size_rule
    if args.m is None and sigma is not None and rule not in regime_of(sigma).size_rules:
        raise UsageError(f"--eps/--delta without --m needs --sigma 0 (exact global profile) or --sigma < 0 (global "
                         f"pure eps-DP; --m-rule global only): got --sigma {sigma:g}. Give --m.")
    return ReleaseRecipe(source=_source(args.data), columns=tuple(_column_specs(args)), eps=args.eps,
                         delta=args.delta, m=args.m, size_rule=args.m_rule if args.m is None else "fixed",
                         sigma=sigma, theta=args.theta, seed=args.seed, sep=args.sep,
                         mechanism=mechanism.key, bins=args.bins,
                         header=_HEADER_CHOICES[args.header] if args.header is not None else None,
                         encoding=args.encoding, thousands=args.thousands, keep_na_text=bool(args.keep_na_text),
                         counts_column=args.counts_column, releases=1 if args.releases is None else args.releases,
                         coarsening=_coarsening(args.coarsening))


def _coarsening(text: str | None) -> tuple:
    """The ``--coarsening`` JSON list as ColumnTransform objects (the recipe's form)."""
    if text is None:
        return ()
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--coarsening must be a JSON list of transforms: {exc}") from None
    if not isinstance(entries, list):
        raise UsageError(f"--coarsening must be a JSON list of transforms, got {text!r}")
    return tuple(ColumnTransform.from_dict(entry) for entry in entries)


def _source(data: str) -> str:
    """``sample:<name>`` for a bundled sample, otherwise the path as given."""
    path = Path(data)
    if path.is_file() and path.resolve().parent == SAMPLE_DIR.resolve():
        return sample_source(path.name)
    return str(data)


def _column_specs(args: argparse.Namespace) -> list[data_layer.ColumnSpec]:
    columns, categorical_names = args.column or [], args.categorical or []
    bounds_given, decimals_given = args.bounds or [], args.decimals or []
    names = list(columns) + [c for c in categorical_names if c not in columns]
    if not names:
        raise UsageError("choose at least one column with --column C")
    categorical = set(categorical_names)
    numeric = [c for c in names if c not in categorical]
    if bounds_given and len(bounds_given) != len(numeric):
        raise UsageError(f"give --bounds LO HI once per numeric column, in order ({len(numeric)}: "
                         f"{', '.join(numeric) or 'none'}), got {len(bounds_given)}")
    if len(decimals_given) not in (0, 1, len(numeric)) or (decimals_given and not numeric):
        raise UsageError(f"give --decimals once (all numeric columns) or once per numeric column "
                         f"({len(numeric)}: {', '.join(numeric) or 'none'}), got {len(decimals_given)}")
    if args.log and not numeric:
        raise UsageError("--log applies to numeric columns, and all chosen columns are categorical")
    grid_given = getattr(args, "grid", None) or []   # release only: compare has no grid
    if grid_given and len(grid_given) != len(numeric):
        raise UsageError(f"give --grid STEP once per numeric column, in order ({len(numeric)}: "
                         f"{', '.join(numeric) or 'none'}), got {len(grid_given)}")
    if grid_given and not bounds_given:
        raise UsageError("--grid needs --bounds: a grid is public only on public bounds")
    public_categories = {}
    for column, text in getattr(args, "public_categories", None) or []:
        if column not in categorical:
            raise UsageError(f"--public-categories {column} ...: {column!r} is not a --categorical column")
        if column in public_categories:
            raise UsageError(f"--public-categories given twice for column {column!r}")
        public_categories[column] = tuple(c.strip() for c in text.split(","))
    bounds = iter(bounds_given) if bounds_given else None
    decimals = iter(decimals_given) if len(decimals_given) == len(numeric) else None
    grid = iter(grid_given) if grid_given else None
    missing = _missing_choices(getattr(args, "missing", None), names)
    specs = []
    for name in names:
        if name in categorical:
            specs.append(data_layer.ColumnSpec(name, kind="categorical", categories=public_categories.get(name),
                                               missing=missing.get(name)))
            continue
        typed = next(decimals) if decimals is not None else (decimals_given[0] if decimals_given else None)
        step = next(grid) if grid is not None else None
        specs.append(data_layer.ColumnSpec(
            name, log=bool(args.log),
            bounds=tuple(next(bounds)) if bounds is not None else None,
            decimals=typed, grid=step, missing=missing.get(name),
            # --decimals-from-data: the precision read off the data, where none is public (typed or a grid)
            precision_from_data=bool(getattr(args, "decimals_from_data", None)) and typed is None and step is None))
    return specs


def _missing_choices(given, names: list[str]) -> dict:
    """Each released column's ``missing`` from the ``--missing`` options: ``[choice]`` for every
    column, ``[column, choice]`` for one (which wins over the choice for every column)."""
    every, own = None, {}
    for entry in given or []:
        if len(entry) not in (1, 2) or entry[-1] not in data_layer.MISSING_CHOICES:
            raise UsageError(f"--missing takes 'value' or 'drop' (every released column) or a column and 'value' or "
                             f"'drop' (that column), got --missing {' '.join(entry)}")
        if len(entry) == 1:
            if every is not None and every != entry[0]:
                raise UsageError(f"--missing {every} and --missing {entry[0]} both apply to every column: give one")
            every = entry[0]
            continue
        column, choice = entry
        if column not in names:
            raise UsageError(f"--missing {column} {choice}: {column!r} is not a released column "
                             f"({', '.join(map(repr, names))}); choose it with --column first")
        if own.get(column, choice) != choice:
            raise UsageError(f"--missing gives column {column!r} two choices: give one")
        own[column] = choice
    return {name: own.get(name, every) for name in names}
