"""Command line: release PYPP synthetic data from a CSV file (issue 2, item 5).

.. code-block:: text

    python -m core release DATA.csv --column C [--column C2 ...] [--categorical C ...]
        --theta T [--sigma S] [--m M] --eps E --delta D
        [--bounds LO HI ...] [--log] [--decimals D ...] [--sep ,]
        [--seed S] --out synth.csv [--report report.json]

The data layer (:mod:`core.data`) reads and prepares the columns, the mechanism
(:func:`core.mechanisms.pypp_release`, SPEC §2) draws ``m`` synthetic rows, which are
written in original units, and :func:`core.report.release_report` states the guarantees
(SPEC §3) at ``--eps`` against the target ``--delta`` in a JSON report. ``--m`` fixes the
release size; without it the release size is the largest admissible under the global
guarantee of Theorem 2, :func:`core.privacy.max_synthetic_size` (σ = 0 only). A
guarantee that misses the δ target is named on stderr (``warning: ...``).

Bad input (a missing file, a column that does not exist, NaNs, out-of-range
parameters, …) ends with ``error: <what to fix>`` on stderr and exit status 2, never a
traceback.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import warnings
from pathlib import Path

import numpy as np

from . import data as data_layer
from .mechanisms import pypp_release
from .privacy import max_synthetic_size, singleton_limit
from .report import release_report
from .validation import PrivacyLeakWarning, check_delta, check_eps, check_m, check_py_parameters

__all__ = ["build_parser", "main", "run_release"]

PROG = "python -m core"


class UsageError(ValueError):
    """A command-line mistake (reported with the usage line)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Private synthetic data with the Pitman-Yor posterior-predictive mechanism.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    release = commands.add_parser(
        "release", help="release m synthetic rows of a CSV file",
        description="Release m synthetic rows of the chosen columns of DATA.csv with the PYPP mechanism "
                    "(SPEC §2) and write a JSON report of the privacy guarantees (SPEC §3).",
        epilog="Numeric transforms, in this order and in original units: --decimals (rounding), clipping "
               "to --bounds, --log, scaling to [0, 1] with the bounds. Bounds are public knowledge: without "
               "--bounds they are read off the data, which the guarantee does not cover (a warning says so).")
    release.add_argument("data", metavar="DATA.csv", help="input CSV file with a header row")
    release.add_argument("--column", action="append", default=[], metavar="C",
                         help="column to release (repeat for several; a row is one atom)")
    release.add_argument("--categorical", action="append", default=[], metavar="C",
                         help="treat column C as categorical (added to the columns if not given with --column)")
    release.add_argument("--sigma", type=float, default=0.0,
                         help="PY discount: 0 (Dirichlet process, default), in (0, 1), or < 0 with "
                              "theta = z*|sigma| for z public categories")
    release.add_argument("--theta", type=float, required=True, help="PY strength theta > -sigma")
    release.add_argument("--m", type=int,
                         help="number of synthetic rows to release (default: the largest m whose global "
                              "delta at --eps is within --delta; sigma = 0 only)")
    release.add_argument("--eps", type=float, help="(required) epsilon > 0 at which the guarantees are stated")
    release.add_argument("--delta", type=float, help="(required) target delta in (0, 1) the guarantees are "
                                                      "compared with")
    release.add_argument("--bounds", action="append", nargs=2, type=float, default=[], metavar=("LO", "HI"),
                         help="public bounds in original units, once per numeric column, in column order")
    release.add_argument("--log", action="store_true", help="log-transform every numeric column")
    release.add_argument("--decimals", action="append", type=int, default=[], metavar="D",
                         help="round numeric values to D decimals (negative: tens, hundreds, ...), before the "
                              "other transforms and on output; once for all numeric columns or once per "
                              "numeric column")
    release.add_argument("--sep", default=",", help="field separator of DATA.csv (default ',')")
    release.add_argument("--seed", type=int,
                         help="random seed (integer >= 0); without it a fresh one is drawn and recorded")
    release.add_argument("--out", required=True, metavar="synth.csv", help="where to write the synthetic CSV")
    release.add_argument("--report", metavar="report.json",
                         help="where to write the JSON report (default: print it on stdout)")
    release.set_defaults(command_parser=release)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m core`` and of the ``bnp-synth`` script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return run_release(args, sys.argv[1:] if argv is None else argv)  # the only command
    except ValueError as exc:  # bad input: a message and exit status 2, not a traceback
        args.command_parser.error(str(exc))
    except OSError as exc:  # e.g. the output directory does not exist
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        args.command_parser.error(f"{exc.strerror or exc}{where}")


def run_release(args: argparse.Namespace, argv: list[str] | None = None) -> int:
    """Run ``release`` with parsed arguments; raises ValueError on bad input.

    ``argv`` (the arguments after ``python -m core``) is recorded in the report as the
    command that regenerates the release.
    """
    specs = _column_specs(args)
    m_given = args.m is not None
    if args.eps is None or args.delta is None:
        missing = " and ".join(f"--{name}" for name in ("eps", "delta") if getattr(args, name) is None)
        raise UsageError(f"missing {missing}: the report states each guarantee at --eps and compares it with "
                         "the target --delta; with --eps and --delta alone the largest admissible m is released")
    sigma, theta, _ = check_py_parameters(args.sigma, args.theta)
    # Check every parameter before reading a possibly large file.
    if m_given:
        check_m(args.m)
    check_eps(args.eps)
    check_delta(args.delta)
    if not m_given and sigma != 0:
        raise UsageError(f"--eps/--delta without --m needs --sigma 0: the largest admissible m comes from the "
                         f"global guarantee of Theorem 2 (Dirichlet process), got --sigma {args.sigma}. Give --m.")
    seed = _seed(args.seed)
    for option, path in (("--out", args.out), ("--report", args.report)):
        if path is not None and not Path(path).resolve().parent.is_dir():
            raise UsageError(f"{option} {path}: the directory {str(Path(path).resolve().parent)!r} does not exist")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        frame = data_layer.read_csv(Path(args.data), max_bytes=None, sep=args.sep)
        prepared = data_layer.prepare(frame, specs)
    leaks = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    for message in leaks:
        print(f"warning: {message}", file=sys.stderr)

    table = prepared.table
    if m_given:
        m = args.m
        m_rule = "given with --m"
    else:
        m = max_synthetic_size(table.n, theta, args.eps, args.delta)
        m_rule = "largest m admissible under the global guarantee (Theorem 2) at the given eps, delta"
        if m < 1:
            limit = singleton_limit(table.n, theta, args.delta)
            raise ValueError(
                f"no synthetic row can be released at eps={args.eps}, delta={args.delta} with n={table.n}, "
                f"theta={theta}: even m = 1 exceeds delta (the singleton limit is "
                f"floor(delta*(theta+n-1)/(1-delta)) = {limit}). Raise --delta or --theta.")

    rng = np.random.default_rng(seed)
    release = pypp_release(table.atoms, table.counts, sigma, theta, m, rng, base=prepared.bases)
    synthetic = prepared.to_original(release.values)

    command = list(argv or [])
    if args.seed is None:
        command += ["--seed", str(seed)]  # the drawn seed makes the command reproduce the release
    report = release_report(
        multiplicities=table.counts, sigma=sigma, theta=theta, m=m, eps=args.eps, delta=args.delta, seed=seed,
        columns=[str(c) for c in prepared.columns], transforms=prepared.describe(), data_source=str(args.data),
        bounds_from_data=prepared.any_bounds_from_data, command=shlex.join([*PROG.split(), *command]),
        n_new_values=release.n_new_values)
    report["release"].update(m_chosen_by=m_rule, output=str(args.out))

    out = Path(args.out)
    synthetic.to_csv(out, index=False)
    if args.report:  # release_report is JSON-ready
        Path(args.report).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    else:  # escaped: a terminal's encoding may not have ε and δ
        print(json.dumps(report, indent=2))
    for item in report["guarantees"]:  # say which guarantees miss the target, not only in the JSON
        if item["delta"] is None:
            print(f"warning: {item['scope']} guarantee {item['name']}: {item['description']}", file=sys.stderr)
        elif item["meets_target"] is False:
            print(f"warning: {item['scope']} guarantee {item['name']} at eps = {args.eps:g}: "
                  f"delta = {item['delta']:.4g} exceeds the target {args.delta:g}", file=sys.stderr)
    print(f"released m = {m} synthetic rows of {', '.join(map(str, prepared.columns))} to {out}"
          + (f"; report in {args.report}" if args.report else "") + f" (seed {seed})", file=sys.stderr)
    return 0


def _column_specs(args: argparse.Namespace) -> list[data_layer.ColumnSpec]:
    names = list(args.column) + [c for c in args.categorical if c not in args.column]
    if not names:
        raise UsageError("choose at least one column with --column C")
    categorical = set(args.categorical)
    numeric = [c for c in names if c not in categorical]
    if args.bounds and len(args.bounds) != len(numeric):
        raise UsageError(f"give --bounds LO HI once per numeric column, in order ({len(numeric)}: "
                         f"{', '.join(numeric) or 'none'}), got {len(args.bounds)}")
    if len(args.decimals) not in (0, 1, len(numeric)) or (args.decimals and not numeric):
        raise UsageError(f"give --decimals once (all numeric columns) or once per numeric column "
                         f"({len(numeric)}: {', '.join(numeric) or 'none'}), got {len(args.decimals)}")
    if args.log and not numeric:
        raise UsageError("--log applies to numeric columns, and all chosen columns are categorical")
    bounds = iter(args.bounds) if args.bounds else None
    decimals = iter(args.decimals) if len(args.decimals) == len(numeric) else None
    specs = []
    for name in names:
        if name in categorical:
            specs.append(data_layer.ColumnSpec(name, kind="categorical"))
            continue
        specs.append(data_layer.ColumnSpec(
            name, log=args.log,
            bounds=tuple(next(bounds)) if bounds is not None else None,
            decimals=next(decimals) if decimals is not None else (args.decimals[0] if args.decimals else None)))
    return specs


def _seed(seed: int | None) -> int:
    if seed is None:
        # Fresh entropy, recorded in the report so the release can be reproduced.
        return int(np.random.SeedSequence().entropy)
    if seed < 0:
        raise UsageError(f"--seed must be an integer >= 0, got {seed}")
    return seed

