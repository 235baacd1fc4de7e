"""The ledger on the command line (docs/audit.md §8.4).

.. code-block:: text

    python -m core ledger PATH budget NAME --eps E [--delta D] [--by WHO]
    python -m core ledger PATH show [NAME] [--json]
    python -m core release … --ledger [PATH] --dataset NAME [--accept-changed-data]

PATH is an SQLite file, an SQLAlchemy URL (``postgresql+psycopg://user@host/db``) or the word
``default`` (:func:`core.ledger.resolve_location`: ``BNP_SYNTH_LEDGER``, the configuration
file, ``~/.local/share/bnp-synth/ledger.sqlite``); ``release --ledger`` without PATH means
``default``. A release with a public output (``--out``, ``--public-bundle``) is recorded
before anything is written; one over budget ends with exit status 2, the remaining budget on
stderr, and nothing written.
"""
from __future__ import annotations

import argparse
import dataclasses
import getpass
import json
import sys

from ..formatting import format_lower, format_upper
from ..privacy import DIRICHLET_PROCESS
from ..release.gate import spec_of_public_report
from .accounting import charge_of_spec
from .fingerprint import source_fingerprint
from .location import DEFAULT_WORD, display_location
from .store import BudgetExceeded, DatasetEntry, Reservation, open_ledger

__all__ = ["add_ledger_parser", "add_release_options", "format_ledger", "reserve_release", "run_ledger", "whoami"]


def whoami() -> str:
    """The operating system's user name (who releases from the command line)."""
    try:
        return getpass.getuser() or "unknown"
    except (KeyError, OSError):   # no user name for this uid (a container)
        return "unknown"


def add_ledger_parser(commands) -> None:
    """``ledger PATH budget|show``."""
    ledger = commands.add_parser(
        "ledger", help="set a dataset's privacy budget or show the releases charged to it",
        description="The privacy ledger: every public release of a dataset is charged to its budget (eps, delta). "
                    "sigma = 0 releases compose exactly, delta = 1 - prod(1 - T1); pure eps adds "
                    "(docs/audit.md section 8).")
    ledger.add_argument("path", metavar="PATH",
                        help=f"the ledger: an SQLite file, an SQLAlchemy URL, or '{DEFAULT_WORD}' (BNP_SYNTH_LEDGER, "
                             "the configuration file, ~/.local/share/bnp-synth/ledger.sqlite)")
    actions = ledger.add_subparsers(dest="ledger_action", metavar="ACTION")
    actions.required = True
    budget = actions.add_parser("budget", help="set (or change) the budget of a dataset")
    budget.add_argument("name", metavar="NAME", help="the dataset's name (published in release.json)")
    budget.add_argument("--eps", type=float, required=True, help="budget epsilon >= 0")
    budget.add_argument("--delta", type=float, default=0.0, help="budget delta in [0, 1) (default 0: pure only)")
    budget.add_argument("--by", help="who sets it (default: the operating system's user)")
    show = actions.add_parser("show", help="list the datasets, their budgets and releases")
    show.add_argument("name", metavar="NAME", nargs="?", help="only this dataset")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    for p in (ledger, budget, show):
        p.set_defaults(command_parser=p)


def add_release_options(release: argparse.ArgumentParser) -> None:
    """``release``'s ledger options."""
    group = release.add_argument_group("privacy ledger (docs/audit.md section 8)")
    group.add_argument("--ledger", nargs="?", const=DEFAULT_WORD, metavar="PATH",
                       help="charge the public release (--out, --public-bundle) to the dataset's budget in this "
                            f"ledger before anything is written (without PATH: the default ledger); refused over "
                            "budget (exit status 2, nothing written)")
    group.add_argument("--dataset", metavar="NAME", help="the dataset's name in the ledger (with --ledger)")
    group.add_argument("--accept-changed-data", action="store_true",
                       help="record the release although the data differ from those last released under NAME "
                            "(flagged in the ledger)")


def reserve_release(args: argparse.Namespace, result, public: bool) -> Reservation | None:
    """Record the release in the ledger before any output is written (``None`` without
    ``--ledger``, or when no public output is asked: a CONFIDENTIAL output is no release).

    Raises
    ------
    ValueError
        ``--ledger`` without ``--dataset`` (or the reverse), or a refusal
        (:class:`~core.ledger.BudgetExceeded` and the others, with what remains).
    """
    if (args.ledger is None) != (args.dataset is None):
        raise ValueError("--ledger and --dataset go together: the ledger charges the release to the dataset NAME")
    if args.ledger is None:
        return None
    if not public:
        print("note: no public output (--out, --public-bundle): nothing is charged to the ledger", file=sys.stderr)
        return None
    report = result.public_report
    spec = dataclasses.replace(spec_of_public_report(report), releases=1)
    charge = charge_of_spec(spec)
    fingerprint = source_fingerprint(result.recipe.source)   # the file's records, whichever columns
    parameters = {"sigma": spec.sigma, "theta": spec.theta, "m": spec.m, "n": spec.n,
                  "regime": report["mechanism"]["regime"], "target": report["privacy_target"]}
    ledger = open_ledger(args.ledger)
    try:
        return ledger.reserve(args.dataset, charge, fingerprint=fingerprint, n=spec.n, by=whoami(),
                              mechanism=report["mechanism"]["name"], spec=parameters,
                              accept_changed_data=args.accept_changed_data)
    except BudgetExceeded as exc:
        raise BudgetExceeded(str(exc) + _advice(spec, exc), dataset=exc.dataset, budget=exc.budget,
                             cumulative=exc.cumulative, remaining=exc.remaining, requested=exc.requested) from None


def _mechanism_text(release) -> str:
    """A release's mechanism and its public parameters, as ``ledger show`` lists them: PYPP with
    σ, θ and m; any other mechanism with m (its parameters are in the spec JSON)."""
    spec = release.spec or {}
    sizes = f"m={spec.get('m', '?')}"
    if spec.get("sigma") is None:
        return f"{release.mechanism} {sizes}"
    return f"{release.mechanism} sigma={spec['sigma']} theta={spec.get('theta', '?')} {sizes}"


def _advice(spec, exc: BudgetExceeded) -> str:
    """What still fits, for a σ = 0 release at the same θ and n."""
    if spec.regime is not DIRICHLET_PROCESS or exc.remaining[1] <= 0:
        return ""
    eps = exc.remaining[0] if exc.remaining[0] > 0 else 1.0   # σ = 0 costs no ε: any positive ε for the check
    best = DIRICHLET_PROCESS.largest_m(spec.n, 0.0, spec.theta, eps, exc.remaining[1])
    return (f" A sigma = 0 release of at most m = {best:,} rows at theta = {spec.theta:g} still fits." if best >= 1
            else "")


def _row(cells, widths) -> str:
    return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()


def format_ledger(datasets: list[DatasetEntry], location: str) -> str:
    """The ledger as text: per dataset its budget, its releases and what remains."""
    lines = [f"ledger: {display_location(location)}"]
    if not datasets:
        lines.append("no dataset has a budget yet (python -m core ledger PATH budget NAME --eps E --delta D)")
    for ds in datasets:
        eps, delta = ds.cumulative
        eps_left, delta_left = ds.remaining
        lines += ["", f"dataset {ds.name!r}: budget eps = {ds.budget_eps:g}, delta = {ds.budget_delta:g} (set by "
                  f"{ds.set_by} at {ds.set_at.isoformat(timespec='seconds')}); n = "
                  + ("—" if ds.n is None else f"{ds.n:,}")]
        head = ("#", "time (UTC)", "by", "mechanism", "kind", "eps", "delta", "cum. eps", "cum. delta", "state",
                "sha256")
        rows = [(r.index, r.at.strftime("%Y-%m-%d %H:%M:%S"), r.by,
                 _mechanism_text(r), r.charge.kind, format_upper(r.eps, 4), format_upper(r.delta, 4),
                 format_upper(r.cumulative_eps, 4), format_upper(r.cumulative_delta, 4),
                 r.state + (" (data changed)" if r.data_changed else ""), (r.sha256 or "—")[:12])
                for r in ds.releases]
        widths = [max(len(str(x)) for x in column) for column in zip(head, *rows)]
        lines += ["  " + _row(head, widths)] + ["  " + _row(r, widths) for r in rows]
        if not rows:
            lines.append("  no release yet")
        # spent rounded up, what remains rounded down
        lines.append(f"  spent: eps = {format_upper(eps, 6)}, delta = {format_upper(delta, 6)}; remaining: eps = "
                     f"{format_lower(eps_left, 6)}, one more release may have delta <= {format_lower(delta_left, 6)}")
        if ds.incomplete:
            lines.append(f"  {ds.incomplete} incomplete release(s): recorded but not confirmed written (a crash, "
                         "or one being written now); counted as spent")
    return "\n".join(lines)


def run_ledger(args: argparse.Namespace) -> int:
    """Run ``ledger``; raises ValueError on bad input or a refusal."""
    with open_ledger(args.path) as ledger:
        if args.ledger_action == "budget":
            entry = ledger.set_budget(args.name, args.eps, args.delta, by=args.by or whoami())
            print(f"budget of {entry.name!r}: eps = {entry.budget_eps:g}, delta = {entry.budget_delta:g} "
                  f"({len(entry.releases)} release(s) already charged)", file=sys.stderr)
            return 0
        datasets = [ledger.dataset(args.name)] if args.name else ledger.datasets()
        if args.json:
            print(json.dumps({"ledger": display_location(ledger.location),
                              "datasets": [d.to_dict() for d in datasets]}, indent=2))
        else:
            print(format_ledger(datasets, ledger.location))
    return 0
