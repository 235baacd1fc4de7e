"""User text stays text, and CSV cells stay data.

* Markdown injection: :func:`ui.text.literal` escapes everything Streamlit's Markdown would
  interpret; a source rule (read with ``ast``) fails on a page or widget that interpolates
  a user value into a Markdown-rendering element without it; the app, run on a hostile
  file (AppTest), puts no raw hostile Markdown in any element that renders Markdown.
  ``tests/e2e/test_injection.py`` checks the rendered page in Chromium.
* Formula injection: :func:`core.formatting.formula_safe` guards every text cell and column
  name of every CSV (the public ``synthetic.csv``, the curator's tables, the app's
  downloads, the command line's ``--out``); numbers are left alone.
"""

from __future__ import annotations

import ast
import io
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core.cli import main
from core.data import ColumnSpec, ColumnTransform
from core.formatting import FORMULA_TRIGGERS, formula_safe, neutralise_formula
from core.release import ReleaseRecipe, build_bundles, run_recipe
from core.release.gate import ACKNOWLEDGEMENTS
from ui.selection import content_hash
from ui.text import literal, quoted, shown
from ui.widgets import csv_bytes

REPO = Path(__file__).resolve().parents[1]

HOSTILE_COLUMN = "**bold** $x$ <b>"
HOSTILE_CELLS = ["![t](http://127.0.0.1:9/x.png)", "**b** $y$", ":red[spoof] :material/home:",
                 "<img src=http://127.0.0.1:9/y.png>", "[click](http://127.0.0.1:9/z) &lt;", "# Heading\n- item",
                 "`code` ~~s~~ _i_ \\*", "www.example.org a@b.org"]
FORMULAS = ['=HYPERLINK("http://127.0.0.1:9/h","click")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3",
            "\tTAB", "\rCR"]


# --------------------------------------------------------------------------- Markdown: the escape
@pytest.mark.parametrize("text", [HOSTILE_COLUMN, *HOSTILE_CELLS, *FORMULAS, "plain name_2020", "ε ≤ 1, naïve"])
def test_literal_escapes_every_markdown_special(text):
    markdown = literal(text)
    # every ASCII punctuation character is backslash-escaped: nothing can open Markdown, LaTeX, HTML
    # or a directive; no line break starts a block
    assert re.fullmatch(r"(?:\\[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~\n\r\t])*", markdown), markdown
    plain = markdown.replace("\\", "")   # GFM autolinks run after the escapes: broken by a word joiner
    assert "://" not in plain and "www." not in plain.lower() and not re.search("(?:^|[^\u2060])@", plain)
    # what is shown is the text itself (line breaks as spaces)
    assert shown(markdown) == re.sub(r"[\n\r\t]", " ", text)
    assert quoted(text) == literal(repr(text))


# --------------------------------------------------------------------------- Markdown: a source rule
#: Streamlit calls whose text is rendered as Markdown (Streamlit 1.67): bodies, labels, help.
MARKDOWN_CALLS = {"markdown", "caption", "error", "warning", "info", "success", "toast", "spinner", "expander",
                  "popover", "title", "header", "subheader", "checkbox", "toggle", "radio", "selectbox",
                  "multiselect", "select_slider", "slider", "number_input", "text_input", "text_area", "button",
                  "download_button", "metric", "progress", "file_uploader", "form_submit_button", "write",
                  "pills", "segmented_control", "tabs"}
MARKDOWN_KEYWORDS = {"label", "help", "text", "body", "value", "delta", "captions"}
#: Names that carry user text: file, column and category names, cells, and core's messages (which
#: quote them). An interpolated value naming one of them must go through ui.text.literal / quoted.
USER_TEXT = {"name", "names", "column", "columns", "col", "c", "source", "problem", "read_problem", "exc", "note",
             "notes", "warning", "warnings", "message", "caveat", "target", "scale_label", "counts_column",
             "coarsening_label", "reasons", "bounds_from_data", "reason", "uploaded", "profile", "email", "user",
             "categories", "keep", "labels", "record", "records", "value", "values", "cell", "cells"}
#: User text as a variable (a reader's note), the app's own text as an attribute (``model.note``).
USER_TEXT_VARIABLES = {"note"}
ESCAPES = {"literal", "quoted"}
#: Calls that print numbers (a size, a privacy number): no user text can come out of them.
NUMBER_FORMATTERS = {"size_text", "format_upper", "fmt", "len", "format_score"}


def _call_name(func) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _identifiers(node) -> set[str]:
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, ast.Attribute) and sub.attr not in USER_TEXT_VARIABLES:
            out.add(sub.attr)
        elif isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value,
                                                                                                    str):
            out.add(sub.slice.value)
    return out


def _escaped(node) -> bool:
    return isinstance(node, ast.Call) and _call_name(node.func) in ESCAPES | NUMBER_FORMATTERS


#: String methods that build text from their arguments: ``", ".join(names)``, ``"{}".format(name)``.
TEXT_BUILDERS = {"join", "format"}


def _unescaped_user_text(expr, tainted=frozenset()) -> list[str]:
    """Interpolations (and bare arguments) of ``expr`` that carry user text unescaped.

    Text reaches Markdown through an f-string, ``+``, ``%`` formatting, ``.format(...)`` or
    ``str.join(...)``, each followed into its parts (an escaped part, a number or a format
    spec is fine); ``tainted`` adds the page's variables built from user text."""
    user = USER_TEXT | USER_TEXT_VARIABLES | tainted
    if expr is None or isinstance(expr, ast.Constant) or _escaped(expr):
        return []
    found = []
    if isinstance(expr, ast.JoinedStr):
        for part in expr.values:
            if isinstance(part, ast.FormattedValue) and not _escaped(part.value):
                if part.conversion == ord("r"):
                    found.append(ast.unparse(part.value) + "!r")
                elif part.format_spec is None:
                    found += _unescaped_user_text(part.value, tainted)
    elif isinstance(expr, ast.BinOp):   # "a" + b, "%s" % b, "%s %s" % (a, b)
        found += _unescaped_user_text(expr.left, tainted) + _unescaped_user_text(expr.right, tainted)
    elif isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        for element in expr.elts:
            found += _unescaped_user_text(element, tainted)
    elif isinstance(expr, ast.IfExp):
        found += _unescaped_user_text(expr.body, tainted) + _unescaped_user_text(expr.orelse, tainted)
    elif isinstance(expr, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
        # the loop variables over user text are user text in the element
        loop = set(tainted)
        for generator in expr.generators:
            if _identifiers(generator.iter) & (user | loop):
                loop |= {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
        found += _unescaped_user_text(expr.elt, frozenset(loop))
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in TEXT_BUILDERS:
        for part in [expr.func.value, *expr.args, *(k.value for k in expr.keywords)]:
            found += _unescaped_user_text(part, tainted)
    elif _identifiers(expr) & user:
        found.append(ast.unparse(expr))
    return found


def _builds_text(expr) -> bool:
    """Whether ``expr`` builds a string (the values a page names and later shows)."""
    if isinstance(expr, ast.IfExp):
        return _builds_text(expr.body) or _builds_text(expr.orelse)
    return (isinstance(expr, ast.JoinedStr) or (isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Mod)))
            or (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
                and expr.func.attr in TEXT_BUILDERS))


def _tainted_variables(tree) -> frozenset:
    """Variables a module assigns a string built from unescaped user text (``which = ", ".join(names)``)."""
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _builds_text(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = {t.id for t in targets if isinstance(t, ast.Name)} - tainted
                if names and _unescaped_user_text(node.value, frozenset(tainted)):
                    tainted |= names
                    changed = True
    return frozenset(tainted)


def _markdown_offences(source: str) -> list[str]:
    """Every user value the module ``source`` puts into a Markdown-rendering call unescaped."""
    tree = ast.parse(source)
    tainted = _tainted_variables(tree)
    offences = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _call_name(node.func) not in MARKDOWN_CALLS:
            continue
        texts = node.args[:1] + [k.value for k in node.keywords if k.arg in MARKDOWN_KEYWORDS]
        for expr in texts:
            offences += [f"line {node.lineno}: {found}" for found in _unescaped_user_text(expr, tainted)]
    return offences


def _markdown_sources():
    return [REPO / "app.py", *sorted((REPO / "app_pages").glob("*.py")), *sorted((REPO / "ui").glob("*.py"))]


@pytest.mark.parametrize("path", _markdown_sources(), ids=lambda p: p.name)
def test_user_text_reaches_markdown_only_through_literal(path):
    """No page or widget interpolates a user value (a name from ``USER_TEXT``, or any ``!r``)
    into an element that renders Markdown without :func:`ui.text.literal`."""
    offences = _markdown_offences(path.read_text(encoding="utf-8"))
    assert not offences, f"{path.name}: user text into Markdown without ui.text.literal: {offences}"


def test_the_source_rule_catches_the_patterns_it_is_for():
    bad = ['st.markdown(f"**{c}** (categorical)")', 'st.error(f"Could not read {source.name}: {problem}")',
           'st.expander(f"Column {c!r}")', "st.warning(warning)", 'st.sidebar.markdown(f"{profile[\'source\']}")',
           'st.info(", ".join(names))', 'st.info("columns: " + ", ".join(repr(c) for c in data.unlisted))',
           'st.caption(f"skipped: {\', \'.join(names)}")', 'st.info("column %s" % name)',
           'st.info("columns %s and %d more" % (", ".join(names), k))', 'st.warning("column {}".format(name))',
           'st.warning("columns {x}".format(x=", ".join(f"**{n}**" for n in names)))',
           'st.info(", ".join(f"{x}" for x in data.columns))']
    good = ['st.markdown(f"**{literal(c)}** (categorical)")', 'st.error(f"n = {n:,}")', "st.warning(literal(w))",
            'st.expander(f"Column {quoted(c)}")', 'st.caption(f"seed {seed}")',
            'st.info(", ".join(quoted(c) for c in names))', 'st.caption(f"{\', \'.join(literal(c) for c in names)}")',
            'st.info("n = %d, d = %d" % (n, d))', 'st.warning("column {}".format(literal(name)))',
            'st.caption(f"grid: {\', \'.join(f\'{e:g}\' for e in compute.SWEEP_EPS)}")',
            'st.warning("Not within the target: " + ", ".join(missed) + ".")']
    for text in bad:
        assert _markdown_offences(text), text
    for text in good:
        assert not _markdown_offences(text), text


def test_the_source_rule_follows_text_built_before_the_call():
    """The Compare page built its list of columns without a public category list by joining
    their names, then wrote it into ``st.info`` (issue 33): the rule follows the variable."""
    old_compare = (
        "if cal.skipped:\n"
        "    which = \", \".join(repr(c) for c in data.unlisted)\n"
        "    st.info(f\"Histogram baselines skipped: categorical column{'s' if len(data.unlisted) > 1 else ''} "
        "{which} has no public category list.\")\n")
    assert _markdown_offences(old_compare) == ["line 3: which"]
    fixed = old_compare.replace("repr(c)", "quoted(c)")
    assert not _markdown_offences(fixed)
    for built in ('label = "column %s" % name', 'label = "column {}".format(name)', 'label = f"column {name}"',
                  'label = "column " + name', 'label = ", ".join(names)'):
        assert _markdown_offences(f"{built}\nst.radio(label, options)") == ["line 2: label"], built
    assert not _markdown_offences('label = ", ".join(quoted(c) for c in names)\nst.radio(label, options)')
    compare = (REPO / "app_pages" / "compare.py").read_text(encoding="utf-8")
    assert "which = \", \".join(quoted(c) for c in data.unlisted)" in compare


# --------------------------------------------------------------------------- Markdown: the app on a hostile file
#: Proto fields a Streamlit element renders as Markdown; a radio's, select slider's and button
#: group's options too (a selectbox's and multiselect's options are plain text).
MARKDOWN_FIELDS = {"body", "label", "help", "caption", "captions", "text", "value"}
MARKDOWN_OPTIONS = {"radio", "select_slider", "button_group"}
RAW = ["**bold**", "$x$", "<b>", "![t](", "**b**", "$y$", ":red[", "<img", "[click](", "http://127", "$z$",
       "**f**"]


def _markdown_texts(node, out: list[str]) -> list[str]:
    proto, kind = getattr(node, "proto", None), getattr(node, "type", "")
    # a text box's value is what the user typed, shown as typed (not Markdown)
    if proto is not None and kind not in ("dataframe", "plotly_chart", "code", "text", "text_input"):
        for field, value in proto.ListFields():
            wanted = field.name in MARKDOWN_FIELDS or (field.name == "options" and kind in MARKDOWN_OPTIONS)
            if not wanted:
                continue
            repeated = hasattr(value, "__len__") and not isinstance(value, (str, bytes)) and \
                not hasattr(value, "ListFields")
            values = list(value) if repeated else [value]
            out += [v for v in values if isinstance(v, str)]
            out += [v.label for v in values if hasattr(v, "label") and isinstance(v.label, str)]   # expander
    for child in getattr(node, "children", {}).values():
        _markdown_texts(child, out)
    return out


@pytest.fixture(scope="module")
def hostile_csv() -> bytes:
    rng = np.random.default_rng(0)
    n = 300
    wage = [f"{v:.2f}" for v in rng.lognormal(3, 0.5, n)]
    wage[5] = HOSTILE_CELLS[0]
    frame = pd.DataFrame({"wage": wage, HOSTILE_COLUMN: rng.choice(HOSTILE_CELLS[:5] + FORMULAS[:3], n)})
    return frame.to_csv(index=False).encode()


def _hostile_app(content: bytes, columns: list[str], **state) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": "**f** $z$ <b>.csv", "bytes": content, "hash": content_hash(content)}
    at.session_state["columns"] = columns
    for key, value in state.items():
        at.session_state[key] = value
    return at


def _assert_no_raw_markdown(at: AppTest, where: str) -> None:
    assert not at.exception, [e.value for e in at.exception]
    texts = _markdown_texts(at._tree, [])
    leaks = [(token, text) for text in texts for token in RAW if token in text]
    assert not leaks, f"{where}: raw user Markdown in a Markdown element: {leaks[:5]}"


def test_hostile_file_names_columns_and_cells_are_text_on_every_page(hostile_csv):
    # a cell in a numeric column: the error quoting it
    at = _hostile_app(hostile_csv, ["wage"])
    at.run()
    assert any("non\\-numeric" in e.value and "\\!\\[t\\]" in e.value for e in at.error), [e.value for e in at.error]
    _assert_no_raw_markdown(at, "Data page, bad cell")
    # the hostile column, its categories in a coarsening, the sidebar, then the other pages
    keep = ColumnTransform(HOSTILE_COLUMN, "keep", keep=tuple(HOSTILE_CELLS[:3]))
    at = _hostile_app(hostile_csv, [HOSTILE_COLUMN], coarsening=(keep,), coarsening_chosen_from_data=True)
    at.run()
    _assert_no_raw_markdown(at, "Data page")
    assert any(HOSTILE_COLUMN in shown(text) for text in _markdown_texts(at.sidebar, []))
    for page in ("synthetic_data.py", "privacy.py", "planner.py", "audit.py"):
        at.switch_page(f"app_pages/{page}").run()
        if page == "synthetic_data.py":
            at.button[0].click().run()
        _assert_no_raw_markdown(at, page)


def test_compare_page_names_columns_without_a_category_list_as_text(hostile_csv):
    """The Compare page's list of categorical columns without a public category list (issue 33:
    a URL in a column name was fetched by the browser) shows the names as text."""
    at = _hostile_app(hostile_csv, [HOSTILE_COLUMN])
    at.run()
    at.switch_page("app_pages/compare.py").run()
    skipped = [e.value for e in at.info if "Histogram baselines skipped" in e.value]
    assert skipped and repr(HOSTILE_COLUMN) in shown(skipped[0]), [e.value for e in at.info]
    _assert_no_raw_markdown(at, "compare.py")


# --------------------------------------------------------------------------- formulas
def test_neutralise_formula_follows_owasp():
    for text in FORMULAS:
        assert text[0] in FORMULA_TRIGGERS
        assert neutralise_formula(text) == "'" + text
    for text in ("-5", "+2.5", "-1e-3", "plain", "", "a=b", " =1"):
        assert neutralise_formula(text) == text   # numbers are numbers; only the first character counts


def test_formula_safe_touches_text_cells_and_names_only():
    frame = pd.DataFrame({"=name": FORMULAS + ["-5", None],
                          "amount": np.array([-1.5, -2, 3, 4, 5, 6, -7, 8]),
                          "code": pd.Categorical(["@x"] * 4 + ["ok"] * 4),
                          "label": pd.array(["=1", None, "b", "c", "d", "e", "f", "g"], dtype="string")})
    safe = formula_safe(frame)
    assert list(safe.columns) == ["'=name", "amount", "code", "label"]
    assert list(safe["'=name"][:6]) == ["'" + f for f in FORMULAS] and safe["'=name"][6] == "-5"
    assert pd.isna(safe["'=name"][7]) and pd.isna(safe["label"][1])
    assert safe["amount"].dtype == float and (safe["amount"] == frame["amount"]).all()
    assert list(safe["code"]) == ["'@x"] * 4 + ["ok"] * 4 and safe["label"][0] == "'=1"
    assert list(frame.columns)[0] == "=name" and frame.iloc[0, 0] == FORMULAS[0]   # the input is unchanged
    plain = pd.DataFrame({"x": [-1, 2], "y": ["a", "b"]})
    assert formula_safe(plain) is plain
    text = csv_bytes(frame).decode()   # the app's downloads
    assert all(not line.startswith(("=", "+", "@")) for line in text.splitlines())
    assert formula_safe(frame).to_csv(index=False).encode() == csv_bytes(frame)


@pytest.fixture(scope="module")
def formula_release():
    rng = np.random.default_rng(1)
    n = 200
    frame = pd.DataFrame({"=HYPERLINK(\"http://127.0.0.1:9\",\"x\")": rng.choice(FORMULAS[:4] + ["-5", "ok"], n),
                          "amount": np.round(rng.normal(0, 3, n), 1)})
    recipe = ReleaseRecipe(source="upload", columns=(ColumnSpec(frame.columns[0], kind="categorical"),
                                                     ColumnSpec("amount", bounds=(-10.0, 10.0), decimals=1)),
                           eps=2.0, delta=0.9, m=200, theta=2.0, seed=5)
    return frame, run_recipe(recipe, frame)


def _formula_cells(text: str) -> list[str]:
    """Cells of a CSV text that a spreadsheet would run."""
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, comment="#")
    cells = list(frame.columns) + [v for column in frame.columns for v in frame[column]]
    return [v for v in cells if v[:1] in FORMULA_TRIGGERS and neutralise_formula(v) != v]


def test_public_synthetic_csv_and_curator_tables_are_formula_safe(formula_release, tmp_path):
    frame, result = formula_release
    bundles = build_bundles(result, acknowledged=tuple(ACKNOWLEDGEMENTS))
    with zipfile.ZipFile(io.BytesIO(bundles.public)) as zf:
        synthetic = zf.read("synthetic.csv")
        readme = zf.read("README.txt").decode()
    with zipfile.ZipFile(io.BytesIO(bundles.curator)) as zf:
        curator = {name: zf.read(name) for name in zf.namelist()}
    assert synthetic == result.synthetic_csv()
    released = pd.read_csv(io.BytesIO(synthetic))
    assert released.columns[0] == "'" + frame.columns[0]
    assert (released["amount"] < 0).any()   # negative numbers are written as numbers
    assert set(released.iloc[:, 0]) & {"'" + f for f in FORMULAS[:4]} and "-5" in set(released.iloc[:, 0].astype(str))
    for name, payload in [("synthetic.csv", synthetic), *[(k, v) for k, v in curator.items() if k.endswith(".csv")]]:
        assert not _formula_cells(payload.decode()), name
    assert "CONFIDENTIAL_category_counts.csv" in curator
    assert "Spreadsheet formulas" in readme and "OWASP" in readme
    assert "Spreadsheet formulas" in curator["CONFIDENTIAL_README.txt"].decode()


def test_cli_out_is_formula_safe(tmp_path, capsys):
    data = tmp_path / "data.csv"
    pd.DataFrame({"label": FORMULAS[:4] * 30}).to_csv(data, index=False)
    out = tmp_path / "s.csv"
    assert main(["release", str(data), "--categorical", "label", "--theta", "2", "--m", "50", "--eps", "1",
                 "--delta", "0.5", "--seed", "1", "--out", str(out), "--accept-weak"]) == 0
    capsys.readouterr()
    assert not _formula_cells(out.read_text()) and "'=HYPERLINK" in out.read_text()
