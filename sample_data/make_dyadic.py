"""Generate the dyadic-geometric sample ``dyadic_geometric.csv`` (SPEC §6, paper §4.2).

Run from the repository root (the project installed with ``pip install -e .``):

.. code-block:: bash

    python sample_data/make_dyadic.py

It draws ``N = 10 000`` iid values :math:`g(Y)`, :math:`Y \\sim \\mathrm{Geometric}(p = 0.1)`
on :math:`\\{1, 2, \\dots\\}`, with :func:`core.evaluation.simulation.sample_dyadic_geometric` and the
fixed seed below, and writes them as one column ``x``. Every value is a dyadic rational
of (0, 1), exact in binary, and pandas writes the shortest decimal that round-trips, so
reading the file back gives the drawn numbers exactly. Re-running reproduces the file
byte for byte (same numpy ``Generator``/PCG64 stream).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

try:
    from core.evaluation.simulation import sample_dyadic_geometric
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from core.evaluation.simulation import sample_dyadic_geometric

OUT = Path(__file__).with_name("dyadic_geometric.csv")
SEED = 20260402
SIZE = 10_000
P = 0.1


def main() -> None:
    values = sample_dyadic_geometric(SIZE, P, np.random.default_rng(SEED))
    pd.DataFrame({"x": values}).to_csv(OUT, index=False)
    back = pd.read_csv(OUT)["x"].to_numpy()
    if not np.array_equal(back, values):
        raise RuntimeError("dyadic_geometric.csv does not read back to the drawn values")
    atoms, counts = np.unique(values, return_counts=True)
    print(f"wrote {OUT.name}: {SIZE} rows, {atoms.size} distinct values, "
          f"{int((counts == 1).sum())} singletons, largest multiplicity {int(counts.max())}")


if __name__ == "__main__":
    main()
