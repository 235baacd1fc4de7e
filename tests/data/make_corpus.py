"""Regenerate the corpus of awkward input files and its manifest ``expected.json``.

Run ``python tests/data/make_corpus.py`` from the repository root; the output is
deterministic (no clocks, no randomness beyond a fixed seed), so a re-run leaves
``git status`` clean.

Every case is a small file a custodian may really hold (an export from a spreadsheet,
a statistical package or a database) and its *expected reading*, computed here from
the cells' text with plain Python (``int``, ``float``, ``str.strip``) — an oracle
independent of :mod:`core.data`:

* ``read``: the delimiter, encoding, header decision, rows and columns;
* ``columns``: per column the kind (``integer``/``float``/``boolean``/``text``/
  ``empty``), the number of missing cells, and the profile the mechanism would use —
  ``numeric`` and/or ``categorical``: ``{"n": .., "k": ..}`` (records, distinct values)
  or ``{"error": substring}`` for a clear refusal (missing values, one value, ...);
* or ``error``: a substring of the ValueError the reader must raise;
* ``cli``: the command line's expected outcome for one column (``python -m core
  release``), which cannot pass every reading option (see tests/test_corpus.py).

Several cases may share one file with different reading ``options``.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MISSING = ("", "NA", "N/A", "n/a", "na", "NaN", "nan", "-nan", "-NaN", "NULL", "null", "Null", "None", "none",
           "#N/A", "#NA", "<NA>", "NaT")

CASES: dict[str, dict] = {}
FILES: dict[str, bytes] = {}


# --------------------------------------------------------------------------- oracles


def as_int(cell: str):
    cell = cell.strip()
    return None if cell in MISSING else int(cell)


def as_float(cell: str):
    cell = cell.strip()
    return None if cell in MISSING else float(cell)


def as_text(cell: str):
    cell = cell.strip()
    return None if cell in MISSING else cell


def as_text_keep_na(cell: str):
    cell = cell.strip()
    return None if cell == "" else cell


def as_bool(cell: str):
    cell = cell.strip()
    return None if cell in MISSING else cell.lower() == "true"


def thousands_float(cell: str):
    cell = cell.strip()
    return None if cell in MISSING else float(cell.replace(",", ""))


KIND = {as_int: "integer", as_float: "float", thousands_float: "float", as_text: "text", as_text_keep_na: "text",
        as_bool: "boolean"}


def profile(values: list, kind: str) -> dict:
    """The expected profile of a column as the mechanism sees it (bounds from the data)."""
    n = len(values)
    present = [v for v in values if v is not None]
    if len(present) < n:
        return {"error": "missing value"}
    if n < 2:
        return {"error": "at least 2 records"}
    if kind == "numeric":
        if any(isinstance(v, float) and math.isinf(v) for v in present):
            return {"error": "infinite value"}
        if len(set(present)) == 1:
            return {"error": "takes the single value"}
    return {"n": n, "k": len(set(present))}


# --------------------------------------------------------------------------- writers


def render(header, rows, sep=",", newline="\n", quote_all=False) -> str:
    def cell(c):
        c = str(c)
        if quote_all or sep in c or '"' in c or "\n" in c:
            return '"' + c.replace('"', '""') + '"'
        return c
    lines = ([sep.join(cell(h) for h in header)] if header is not None else [])
    lines += [sep.join(cell(c) for c in row) for row in rows]
    return newline.join(lines) + newline


def case(name: str, *, header, rows, parsers, sep=",", newline="\n", encoding="utf-8", bom=b"", file=None,
         content: bytes | None = None, options=None, read=None, cli=None, numeric=None, categorical=None,
         quote_all=False):
    """A readable file: its expected reading is derived from the cell text by ``parsers``.

    ``parsers`` maps each column (by position) to an oracle; ``numeric``/``categorical``
    list the columns (by position) to profile that way (default: numeric for integer
    and float columns, categorical for the others).
    """
    file = file or name
    if content is None:
        content = bom + render(header, rows, sep, newline, quote_all).encode(encoding)
    FILES.setdefault(file, content)
    assert FILES[file] == content, f"{file} written twice with different content"
    names = [str(h).strip() for h in header] if header is not None else [f"column_{j + 1}" for j in range(len(parsers))]
    columns = {}
    for j, parse in enumerate(parsers):
        values = [parse(row[j]) for row in rows]
        kind = KIND[parse]
        entry = {"kind": kind, "n_missing": sum(v is None for v in values)}
        as_numeric = numeric if numeric is not None else [i for i, p in enumerate(parsers)
                                                           if KIND[p] in ("integer", "float")]
        as_categorical = categorical if categorical is not None else [i for i, p in enumerate(parsers)
                                                                       if KIND[p] not in ("integer", "float")]
        if j in as_numeric:
            entry["numeric"] = profile(values, "numeric")
        if j in as_categorical:
            entry["categorical"] = profile(values, "categorical")
        columns[names[j]] = entry
    expected_read = {"delimiter": sep, "encoding": encoding if not bom else {"utf-8": "utf-8-sig"}.get(encoding, encoding),
                     "header": header is not None, "n_rows": len(rows), "n_columns": len(parsers)}
    expected_read.update(read or {})
    CASES[name] = {"file": file, "options": options or {}, "read": expected_read, "columns": columns}
    if cli is not None:
        CASES[name]["cli"] = cli


def error_case(name: str, content: bytes, error: str, *, file=None, options=None, cli_error=None):
    """A file the reader must refuse with a message containing ``error``."""
    file = file or name
    FILES.setdefault(file, content)
    CASES[name] = {"file": file, "options": options or {}, "error": error}
    if cli_error is not None:
        CASES[name]["cli"] = {"error": cli_error}


# --------------------------------------------------------------------------- the cases

AGES = ["34", "29", "34", "51", "29", "62", "34", "45"]
INCOME = ["1520.50", "980.00", "1520.50", "2210.75", "640.25", "980.00", "3105.10", "1520.5"]
SEX = ["f", "m", "f", "f", "m", "m", "f", "m"]

case("basic.csv", header=["age", "income", "sex"], rows=list(zip(AGES, INCOME, SEX)),
     parsers=[as_int, as_float, as_text])

# Separators
case("semicolon.csv", header=["age", "income", "sex"], rows=list(zip(AGES, INCOME, SEX)), sep=";",
     parsers=[as_int, as_float, as_text])
case("tab.csv", header=["age", "income", "sex"], rows=list(zip(AGES, INCOME, SEX)), sep="\t",
     parsers=[as_int, as_float, as_text])
case("pipe.csv", header=["age", "income", "sex"], rows=list(zip(AGES, INCOME, SEX)), sep="|",
     parsers=[as_int, as_float, as_text])
case("semicolon_decimal_comma.csv", header=["amount", "region"],
     rows=[["1,5", "north"], ["2,25", "south"], ["1,5", "east"], ["3,0", "south"]], sep=";",
     parsers=[as_text, as_text], numeric=[], categorical=[0, 1])
case("excel_sep_line.csv", header=None, rows=[], parsers=[],
     content=b"sep=;\nage;sex\n34;f\n29;m\n34;m\n")
CASES["excel_sep_line.csv"].update(
    read={"delimiter": ";", "encoding": "utf-8", "header": True, "n_rows": 3, "n_columns": 2},
    columns={"age": {"kind": "integer", "n_missing": 0, "numeric": {"n": 3, "k": 2}},
             "sex": {"kind": "text", "n_missing": 0, "categorical": {"n": 3, "k": 2}}})
case("pipe_quoted.csv", header=["name", "score"], rows=[["a|b", "1"], ["c", "2"], ["a|b", "3"]], sep="|",
     parsers=[as_text, as_int])
case("single_column.csv", header=["comment"], rows=[["hello, world"], ["a; b"], ["x|y"], ["hello, world"]],
     parsers=[as_text], read={"delimiter": ","})

# Header or no header
case("no_header_numeric.csv", header=None, rows=[[a, i] for a, i in zip(AGES, INCOME)],
     parsers=[as_int, as_float], read={"first_row_looks_like_data": True})
case("no_header_mixed.csv", header=None, rows=[[a, s] for a, s in zip(AGES, SEX)],
     parsers=[as_int, as_text], read={"first_row_looks_like_data": True})
case("no_header_labels.csv", header=None, rows=[[s, c] for s, c in zip(SEX, ["x", "y", "x", "z", "y", "x", "y", "z"])],
     parsers=[as_text, as_text], read={"first_row_looks_like_data": True})
case("numeric_header_as_data.csv", header=None, rows=[["2019", "2020"], ["5", "7"], ["6", "7"], ["5", "9"]],
     parsers=[as_int, as_int], read={"first_row_looks_like_data": True})
case("numeric_header_given.csv", file="numeric_header_as_data.csv", header=["2019", "2020"],
     rows=[["5", "7"], ["6", "7"], ["5", "9"]], parsers=[as_int, as_int], options={"header": True},
     read={"first_row_looks_like_data": True},
     cli={"column": "2019", "kind": "numeric", "error": "no column named '2019'"})
case("header_only.csv", header=None, rows=[], parsers=[], content=b"age,income,sex\n")
CASES["header_only.csv"] = {"file": "header_only.csv", "options": {}, "error": "but no data rows"}
case("one_row.csv", header=["age", "income"], rows=[["34", "1520.5"]], parsers=[as_int, as_float])
case("one_row_no_header.csv", header=None, rows=[["34", "1520.5"]], parsers=[as_int, as_float],
     read={"first_row_looks_like_data": True})

# Ragged rows
error_case("trailing_comma.csv", b"age,income\n34,1520.5,\n29,980,\n", "trailing comma")
error_case("trailing_comma_some_rows.csv", b"age,income\n34,1520.5\n29,980,\n51,2210\n", "line 3 has 3 field(s)")
error_case("short_row.csv", b"age,income,sex\n34,1520.5,f\n29,980,m\n51,2210\n", "line 4 has 2 field(s)")
error_case("long_row_quoted.csv", b'a,b\n"x",1\n"y",2,3\n', "line 3 has 3 field(s)")
error_case("unclosed_quote.csv", b'a,b\n"x,1\ny,2\n', "never closed")

# Integers beyond float precision
BIG = [str(2**53 + d) for d in (0, 1, 2, 3, 1, 4, 0)]
case("integers_above_2_53.csv", header=["account_cents"], rows=[[v] for v in BIG], parsers=[as_int],
     categorical=[0])
NEAR_MAX = [str(v) for v in (2**63 - 1, 2**63 - 2, -(2**63), -(2**63) + 1, 2**63 - 1)]
case("int64_extremes.csv", header=["id"], rows=[[v] for v in NEAR_MAX], parsers=[as_int], categorical=[0])
# 2**63 - 1 and 2**63 - 2 scaled to [0, 1] by bounds 2**64 apart differ by 5e-20: float64 cannot keep
# them apart, so a numeric release is refused (as categorical labels they are exact).
CASES["int64_extremes.csv"]["columns"]["id"]["numeric"] = {"error": "would merge its 4 distinct values"}
UINT = [str(v) for v in (2**63, 2**63 + 1, 2**64 - 1, 2**63 + 1)]
case("uint64_range.csv", header=["id"], rows=[[v] for v in UINT], parsers=[as_int], categorical=[0])
LONG = [str(10**29 + d) for d in (0, 1, 2, 3, 4, 1, 3)]
case("long_integer_strings.csv", header=["identifier", "group"],
     rows=[[v, g] for v, g in zip(LONG, "abababa")], parsers=[as_int, as_text], categorical=[0, 1])
HUGE = ["9" * 400, "8" * 400, "9" * 400]
case("integers_400_digits.csv", header=["code"], rows=[[v] for v in HUGE], parsers=[as_int], categorical=[0])
CASES["integers_400_digits.csv"]["columns"]["code"]["numeric"] = {"error": "beyond ±1.797e308"}
CASES["integers_400_digits.csv"]["cli"] = {"column": "code", "kind": "categorical"}
case("leading_zeros.csv", header=["zip", "count"], rows=[["00501", "3"], ["02134", "5"], ["00501", "2"],
                                                           ["10001", "3"]],
     parsers=[as_text, as_int])

# Extreme floats
case("plus_minus_1e308.csv", header=["x"], rows=[["1e308"], ["-1e308"], ["5"], ["5"], ["1.7976931348623157e308"]],
     parsers=[as_float])
case("overflow_1e309.csv", header=["x"], rows=[["1e309"], ["1"], ["2"]], parsers=[as_float])
case("tiny_1e-308.csv", header=["x"], rows=[["1e-308"], ["2e-308"], ["1e-308"], ["3e-308"]], parsers=[as_float])
case("subnormal.csv", header=["x"], rows=[["5e-324"], ["1e-323"], ["5e-324"]], parsers=[as_float])
case("infinity.csv", header=["x"], rows=[["inf"], ["-inf"], ["1.5"], ["Infinity"]], parsers=[as_float])
case("scientific.csv", header=["x"], rows=[["1e3"], ["1E3"], ["1000.0"], ["2.5e-3"], ["-4.1E+02"], [".5"]],
     parsers=[as_float])
case("negative.csv", header=["balance"], rows=[["-5"], ["-1000"], ["3"], ["-5"], ["0"], ["-0"]],
     parsers=[as_int])
case("negative_float.csv", header=["delta"], rows=[["-0.5"], ["-1e-3"], ["0.0"], ["-0.0"], ["2"]],
     parsers=[as_float])

# Empty files and degenerate tables
error_case("empty.csv", b"", "is empty")
error_case("blank_lines.csv", b"\n\n  \n\n", "is empty")
case("one_distinct.csv", header=["x", "g"], rows=[["7", "a"]] * 5, parsers=[as_int, as_text])
case("all_distinct.csv", header=["x"], rows=[[f"{i / 7:.6f}"] for i in range(1, 21)], parsers=[as_float])
case("only_quotes.csv", header=None, rows=[], parsers=[], content=b'""\n""\n""\n')
CASES["only_quotes.csv"].update(
    read={"delimiter": ",", "encoding": "utf-8", "header": True, "n_rows": 2, "n_columns": 1},
    columns={"column_1": {"kind": "empty", "n_missing": 2, "numeric": {"error": "missing value"},
                          "categorical": {"error": "missing value"}}})

# Missing values and NA as a label
case("missing_cells.csv", header=["x", "g"],
     rows=[["1.5", "a"], ["", "b"], ["NaN", "a"], ["NA", ""], ["2.5", "NULL"], ["n/a", "b"]],
     parsers=[as_float, as_text])
NA_ROWS = [["NA", "3"], ["yes", "4"], ["no", "3"], ["NA", "5"], ["yes", "2"]]
case("na_category.csv", header=["answer", "score"], rows=NA_ROWS, parsers=[as_text, as_int])
case("na_category_kept.csv", file="na_category.csv", header=["answer", "score"], rows=NA_ROWS,
     parsers=[as_text_keep_na, as_int], options={"keep_na_text": True},
     cli={"column": "answer", "kind": "categorical", "error": "keep_na_text"})
case("integer_with_missing.csv", header=["n"], rows=[["1"], [""], ["3"], ["4"]], parsers=[as_int])
case("all_missing.csv", header=["x", "y"], rows=[["", "1"], ["NA", "2"], ["", "3"]],
     parsers=[as_float, as_int], numeric=[1], categorical=[0])
CASES["all_missing.csv"]["columns"]["x"]["kind"] = "empty"

# Types
case("mixed_types.csv", header=["value"], rows=[["1.5"], ["2"], ["abc"], ["3.25"], ["2"]], parsers=[as_text],
     numeric=[], categorical=[0])
CASES["mixed_types.csv"]["columns"]["value"]["numeric"] = {"error": "non-numeric value"}
case("dates.csv", header=["day", "count"], rows=[["2024-01-05", "3"], ["2024-01-06", "4"], ["2024-01-05", "1"],
                                                  ["2024-02-29", "3"]], parsers=[as_text, as_int])
case("booleans.csv", header=["flag", "n"], rows=[["true", "1"], ["False", "2"], ["TRUE", "1"], ["false", "3"]],
     parsers=[as_bool, as_int])
case("currency_percent.csv", header=["price", "rate"],
     rows=[["$1,200", "15%"], ["$980", "7.5%"], ["$1,200", "15%"], ["€40", "0%"]],
     parsers=[as_text, as_text])
CASES["currency_percent.csv"]["columns"]["price"]["numeric"] = {"error": "non-numeric value"}
case("whitespace.csv", header=[" name ", " score"], rows=[[" a", " 1.5 "], ["a ", "2"], ["  b", "1.5"],
                                                         ["a", " 2 "]], parsers=[as_text, as_float])
case("unicode_labels.csv", header=["ville", "n"], rows=[["Zürich", "1"], ["São Paulo", "2"], ["Zürich", "3"],
                                                       ["東京", "1"]], parsers=[as_text, as_int])

# Quoting and line endings
case("quoted_newlines.csv", header=["note", "x"],
     rows=[["first line\nsecond line", "1"], ["plain", "2"], ["first line\nsecond line", "3"],
           ['with "quotes"', "2"]], parsers=[as_text, as_int])
case("all_quoted.csv", header=["id", "amount"], rows=[["1", "10.5"], ["2", "11"], ["3", "10.5"]],
     parsers=[as_int, as_float], quote_all=True)
case("crlf.csv", header=["age", "sex"], rows=list(zip(AGES, SEX)), newline="\r\n", parsers=[as_int, as_text],
     read={"line_endings": "CRLF"})
case("cr_only.csv", header=["age", "sex"], rows=list(zip(AGES, SEX)), newline="\r", parsers=[as_int, as_text],
     read={"line_endings": "CR"})
case("mixed_line_endings.csv", header=None, rows=[], parsers=[], content=b"a,b\r\n1,x\n2,y\r\n3,x\n")
CASES["mixed_line_endings.csv"].update(
    read={"delimiter": ",", "encoding": "utf-8", "header": True, "n_rows": 3, "n_columns": 2,
          "line_endings": "mixed"},
    columns={"a": {"kind": "integer", "n_missing": 0, "numeric": {"n": 3, "k": 3}},
             "b": {"kind": "text", "n_missing": 0, "categorical": {"n": 3, "k": 2}}})
case("blank_lines_between.csv", header=None, rows=[], parsers=[], content=b"a,b\n1,x\n\n2,y\n   \n3,x\n\n")
CASES["blank_lines_between.csv"].update(
    read={"delimiter": ",", "encoding": "utf-8", "header": True, "n_rows": 3, "n_columns": 2},
    columns={"a": {"kind": "integer", "n_missing": 0, "numeric": {"n": 3, "k": 3}},
             "b": {"kind": "text", "n_missing": 0, "categorical": {"n": 3, "k": 2}}})
LONG_TEXT = "x" * 20000
case("very_long_line.csv", header=["blob", "n"], rows=[[LONG_TEXT, "1"], ["short", "2"], [LONG_TEXT, "1"]],
     parsers=[as_text, as_int])

# Column names
case("duplicate_columns.csv", header=["x", "x", "y"], rows=[["1", "2", "a"], ["1", "3", "b"], ["2", "3", "a"]],
     parsers=[as_int, as_int, as_text])
CASES["duplicate_columns.csv"]["columns"] = {
    "x": CASES["duplicate_columns.csv"]["columns"]["x"],
    "x.1": {"kind": "integer", "n_missing": 0, "numeric": {"n": 3, "k": 2}},
    "y": CASES["duplicate_columns.csv"]["columns"]["y"]}
CASES["duplicate_columns.csv"]["columns"]["x"] = {"kind": "integer", "n_missing": 0, "numeric": {"n": 3, "k": 2}}
case("empty_column_name.csv", header=["x", "", "z"], rows=[["1", "2", "a"], ["2", "2", "b"]],
     parsers=[as_int, as_int, as_text])
CASES["empty_column_name.csv"]["columns"] = {
    "x": {"kind": "integer", "n_missing": 0, "numeric": {"n": 2, "k": 2}},
    "column_2": {"kind": "integer", "n_missing": 0, "numeric": {"error": "takes the single value"}},
    "z": {"kind": "text", "n_missing": 0, "categorical": {"n": 2, "k": 2}}}
WIDE = [f"c{j}" for j in range(1, 10001)]
case("columns_10000.csv", header=WIDE, rows=[[str(j % 7) for j in range(10000)], [str(j % 5) for j in range(10000)],
                                            [str(j % 3) for j in range(10000)]],
     parsers=[as_int] * 10000, numeric=[0, 9999], categorical=[])
CASES["columns_10000.csv"]["columns"] = {c: v for c, v in CASES["columns_10000.csv"]["columns"].items()
                                         if c in ("c1", "c2", "c10000")}

# Encodings
LABELS = ["café", "naïve", "café", "Øre", "über"]
case("utf8_bom.csv", header=["word", "n"], rows=[[w, str(i % 2)] for i, w in enumerate(LABELS)], bom=b"\xef\xbb\xbf",
     parsers=[as_text, as_int])
case("latin1.csv", header=["word", "n"], rows=[[w, str(i % 2)] for i, w in enumerate(LABELS)], encoding="latin-1",
     parsers=[as_text, as_int])
case("cp1252.csv", header=["price", "n"], rows=[["5 €", "1"], ["“quoted”", "2"], ["5 €", "3"]], encoding="cp1252",
     parsers=[as_text, as_int])
case("utf16.csv", header=["word", "n"], rows=[[w, str(i % 3)] for i, w in enumerate(LABELS)], encoding="utf-16",
     parsers=[as_text, as_int])
case("utf16le_no_bom.csv", header=["word", "n"], rows=[[w, str(i % 3)] for i, w in enumerate(LABELS)],
     encoding="utf-16-le", parsers=[as_text, as_int])
case("latin1_given.csv", file="latin1.csv", header=["word", "n"], rows=[[w, str(i % 2)] for i, w in enumerate(LABELS)],
     encoding="latin-1", parsers=[as_text, as_int], options={"encoding": "latin-1"},
     read={"encoding": "latin-1"})
error_case("latin1_read_as_utf8.csv", FILES["latin1.csv"], "is not utf-8 text", file="latin1.csv",
           options={"encoding": "utf-8"})

# Thousands separators
THOUSANDS = [["1,234", "a"], ["12,345.50", "b"], ["980", "a"], ["1,234", "c"], ["-2,000,000", "b"]]
case("thousands.csv", header=["amount", "g"], rows=THOUSANDS, parsers=[as_text, as_text], numeric=[],
     categorical=[1])
CASES["thousands.csv"]["columns"]["amount"]["numeric"] = {"error": "non-numeric value"}
case("thousands_option.csv", file="thousands.csv", header=["amount", "g"], rows=THOUSANDS,
     parsers=[thousands_float, as_text], options={"thousands": ","}, read={"thousands": ","},
     cli={"column": "amount", "kind": "numeric", "error": "non-numeric value"})
case("thousands_semicolon.csv", header=["amount", "g"], rows=THOUSANDS, sep=";",
     parsers=[thousands_float, as_text], options={"thousands": ","},
     cli={"column": "amount", "kind": "numeric", "error": "non-numeric value"})

# Not text at all
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
error_case("binary.csv", PNG, "not a text file")
error_case("gzip.csv", gzip.compress(b"age,sex\n34,f\n29,m\n", mtime=0), "gzip")
_zip = io.BytesIO()
with zipfile.ZipFile(_zip, "w") as archive:
    info = zipfile.ZipInfo("xl/workbook.xml", date_time=(1980, 1, 1, 0, 0, 0))
    archive.writestr(info, "<workbook/>")
error_case("xlsx_renamed.csv", _zip.getvalue(), "ZIP archive")
error_case("nul_bytes.csv", b"age,sex\n34,f\x00\n29,m\n", "not a text file")


def main() -> None:
    for name, content in FILES.items():
        (HERE / name).write_bytes(content)
    manifest = {name: CASES[name] for name in sorted(CASES)}
    (HERE / "expected.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(FILES)} files, {len(CASES)} cases, {sum(map(len, FILES.values()))} bytes")


if __name__ == "__main__":
    main()
