"""The house rules of ``core``, read from the source with ``ast`` (docs/README.md):

* no import circle among core's modules — imports inside functions count, and importing a
  module runs its packages' ``__init__`` first, so that is an edge too;
* no circle among core's packages either: the layers stay layers;
* no private name (``_x``) of one package taken by another, by import or attribute;
* no core file over 1 000 lines, and no ``streamlit`` in core (pages only lay out);
* file formats are core's: no module of ``ui/`` or ``app_pages/`` imports ``pyarrow`` or
  compares a file's magic bytes (Parquet ``PAR1``, gzip ``1f 8b``);
* a page lays out only: no page defines a cached computation (``ui/compute.py`` holds them).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"
MAX_LINES = 1000


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources(*folders: str) -> dict[str, Path]:
    out = {}
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            out[_module_name(path)] = path
    return out


MODULES = _sources("core")
PACKAGES = {name for name, path in MODULES.items() if path.name == "__init__.py"}


def _package_of(module: str) -> str:
    """The package a module belongs to (a package's ``__init__`` belongs to itself)."""
    return module if module in PACKAGES else module.rpartition(".")[0]


def _imports(module: str, path: Path):
    """Yield (imported module, imported name or None, local name, line) for every import of
    ``path``, at any depth; relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _package_of(module)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, alias.asname or alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                yield target, alias.name, alias.asname or alias.name, node.lineno


def _edges() -> dict[str, set[str]]:
    """Module → core modules whose import it triggers (the module and its packages)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for target, name, _, _ in _imports(module, path):
            if not target.startswith("core"):
                continue
            full = f"{target}.{name}" if name else target
            hit = full if full in MODULES else target if target in MODULES else None
            if hit is None:
                continue
            parts = hit.split(".")
            for i in range(2, len(parts) + 1):      # the packages run first
                graph[module].add(".".join(parts[:i]))
        graph[module].discard(module)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_among_core_modules():
    graph = _edges()
    # A package's __init__ importing its own modules is how a package shows its face: the
    # edge from a module to its own package is not a circle of the architecture.
    for module in graph:
        graph[module] = {t for t in graph[module] if not (module.startswith(t + ".") and t in PACKAGES)}
    assert _cycles(graph) == []


def test_packages_form_layers():
    graph: dict[str, set[str]] = {}
    for module, targets in _edges().items():
        source = _package_of(module)
        for target in targets:
            other = _package_of(target)
            if other != source and not source.startswith(other + ".") and not other.startswith(source + "."):
                graph.setdefault(source, set()).add(other)
    assert _cycles(graph) == []


def _private_uses(folders: tuple[str, ...]):
    for module, path in _sources(*folders).items():
        own = _package_of(module) if module.startswith("core") else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_aliases = {}
        for target, name, local, line in _imports(module, path):
            if not target.startswith("core"):
                continue
            full = f"{target}.{name}" if name else target
            if full in MODULES:                      # a module, under its local name
                module_aliases[local] = full
                continue
            if name and name.startswith("_") and not name.startswith("__") and _package_of(target) != own:
                yield f"{path.relative_to(ROOT)}:{line} imports {target}.{name}"
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in module_aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__") and _package_of(module_aliases[node.value.id]) != own):
                yield f"{path.relative_to(ROOT)}:{node.lineno} uses {module_aliases[node.value.id]}.{node.attr}"


def test_no_private_name_taken_across_packages():
    assert list(_private_uses(("core", "ui", "app_pages"))) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_core_files_are_short_and_free_of_streamlit(module):
    path = MODULES[module]
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES, f"{path.relative_to(ROOT)} has more than {MAX_LINES} lines"
    assert not any(target.startswith("streamlit") for target, _, _, _ in _imports(module, path))


# --------------------------------------------------------------------------- ui and pages
UI_MODULES = _sources("ui", "app_pages")
PAGES = {name: path for name, path in UI_MODULES.items() if name.startswith("app_pages.")}
#: The first bytes that tell a file's format: core.data.detect_format reads them.
MAGIC_BYTES = (b"PAR1", b"\x1f\x8b")
CACHE_DECORATORS = {"session_cache", "cache_data", "cache_resource"}


@pytest.mark.parametrize("module", sorted(UI_MODULES))
def test_ui_and_pages_leave_file_formats_to_core(module):
    path = UI_MODULES[module]
    pyarrow = [f"line {line}: {target}" for target, name, _, line in _imports(module, path)
               if target == "pyarrow" or target.startswith("pyarrow.")]
    assert pyarrow == [], f"{path.relative_to(ROOT)} imports pyarrow (core.data reads Parquet)"
    magic = [f"line {node.lineno}: {node.value!r}" for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and isinstance(node.value, bytes)
             and any(m in node.value for m in MAGIC_BYTES)]
    assert magic == [], f"{path.relative_to(ROOT)} compares magic bytes (core.data.detect_format does)"


def _decorator_name(node: ast.expr) -> str:
    """``session_cache`` for ``@session_cache(...)``, ``@sel.session_cache``, …; ``cache_data``
    for ``@st.cache_data``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


@pytest.mark.parametrize("module", sorted(PAGES))
def test_pages_define_no_cached_computation(module):
    path = PAGES[module]
    cached = [f"line {node.lineno}: {node.name}" for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
              if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              and any(_decorator_name(d) in CACHE_DECORATORS for d in node.decorator_list)]
    assert cached == [], f"{path.relative_to(ROOT)} defines cached computations (they belong in ui/compute.py)"
