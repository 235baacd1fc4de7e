"""Timing of the awkward-file corpus (tests/data/) through the data layer and the command
line. Prints JSON; not a test.

Run: python benchmarks/bench_corpus.py [--repeats 3]

Target: every file of the corpus is read by ``core.data.read_table`` (with the reading
options its case records) and, where the case has a releasable column and no reading
options, released by ``python -m core release`` (m = 20), each in at most 5 s on the 2-core
development machine (the files are small: the widest, ``columns_10000.csv``, is the one
that matters). ``tests/test_corpus.py`` keeps only a hang guard of 10× this target.

Also: a 10^6-row, one-column CSV read and reduced to its frequency table within 5 s of CPU
time (``tests/test_data.py`` keeps a hang guard of 10× this).
"""

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import timings  # noqa: E402
from core.cli import main as cli_main  # noqa: E402
from core.data import frequency_table, read_table  # noqa: E402

DATA = ROOT / "tests" / "data"
TARGET_SECONDS = 5.0


def _releasable(case: dict):
    """(flag, column) of the first column the case says can be released, or None."""
    for kind, flag in (("numeric", "--column"), ("categorical", "--categorical")):
        for name, column in case["columns"].items():
            if kind in column and "error" not in column[kind]:
                return flag, name
    return None


def _release(path: Path, flag: str, column: str, out: Path) -> None:
    argv = ["release", str(path), flag, column, "--theta", "1e-9", "--m", "20", "--eps", "1",
            "--delta", "0.5", "--seed", "3", "--save-recipe", str(out)]   # CONFIDENTIAL: --out refuses a missed release
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        if cli_main(argv) != 0:
            raise RuntimeError(f"release of {path.name} failed")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    expected = json.loads((DATA / "expected.json").read_text(encoding="utf-8"))
    read_s, release_s = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in sorted(expected.items()):
            path = DATA / case["file"]
            if "error" in case:
                continue
            read_s[name] = min(timings(lambda: read_table(path, **case["options"]), args.repeats))
            target = _releasable(case) if not case["options"] and "cli" not in case else None
            if target is not None:
                release_s[name] = min(timings(lambda: _release(path, *target, Path(tmp) / "CONFIDENTIAL_recipe.json"),
                                              args.repeats))
    rng = np.random.default_rng(5)
    values = np.round(rng.lognormal(3.0, 1.0, 10**6), 2)
    content = ("earnings\n" + "\n".join(map(repr, values.tolist())) + "\n").encode()
    million_cpu_s = []
    for _ in range(args.repeats):
        start = time.process_time()
        frequency_table(read_table(content, max_bytes=None).frame["earnings"])
        million_cpu_s.append(time.process_time() - start)
    slowest_read = max(read_s, key=read_s.get)
    slowest_release = max(release_s, key=release_s.get)
    out = {
        "config": {"files_read": len(read_s), "files_released": len(release_s), "repeats": args.repeats},
        "target_seconds_per_file": TARGET_SECONDS,
        "slowest_read": {"file": slowest_read, "seconds": read_s[slowest_read]},
        "slowest_release": {"file": slowest_release, "seconds": release_s[slowest_release]},
        "read_seconds": read_s,
        "release_seconds": release_s,
        "million_rows_read_and_profiled_cpu_seconds": min(million_cpu_s),
        "meets_target": (max(read_s.values()) <= TARGET_SECONDS and max(release_s.values()) <= TARGET_SECONDS
                         and min(million_cpu_s) <= TARGET_SECONDS),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
