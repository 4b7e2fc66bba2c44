"""capeval_core never imports streamlit (house style, principle 1)."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import capeval_core
from tests.conftest import fresh_python


def test_core_never_imports_streamlit():
    modules = [m.name for m in pkgutil.walk_packages(capeval_core.__path__, "capeval_core.")]
    assert "capeval_core.cli" in modules and "capeval_core.metrics.bleu" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'streamlit' or m.startswith('streamlit.'))\n"
        "print(','.join(bad))\n"
    )
    stdout = fresh_python(code)
    assert stdout.strip() == ""


def test_ruff_bans_streamlit_in_core():
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    banned = config["tool"]["ruff"]["lint"]["flake8-tidy-imports"]["banned-api"]
    assert "streamlit" in banned


# -- who may import whom ------------------------------------------------------------------------

#: module -> packages and modules it must never import, not even inside a function. The
#: batch-scoring engine sits below both of its users (issue #33), so the Systems path reads
#: systems -> batch -> metrics and never passes through judgments. A package is listed with
#: each of its modules: the statements read are its ``__init__``'s only.
FORBIDDEN_IMPORTS = {
    "capeval_core.batch": ("capeval_core.systems", "capeval_core.judgments"),
    "capeval_core.systems": ("capeval_core.judgments",),
    "capeval_core.systems.loading": ("capeval_core.judgments",),
    "capeval_core.systems.scoring": ("capeval_core.judgments",),
    "capeval_core.systems.comparison": ("capeval_core.judgments",),
    "capeval_core.systems_table": ("capeval_core.judgments",),
}


def _imported(module: str) -> set[str]:
    """Every module named by an import statement of ``module``'s source, at any depth."""
    import ast
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    package = module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names.add(base)
            # `from capeval_core import systems` imports a module too
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _within(name: str, banned: str) -> bool:
    return name == banned or name.startswith(banned + ".")


def test_modules_import_only_what_their_layer_allows():
    for module, banned in FORBIDDEN_IMPORTS.items():
        bad = sorted(n for n in _imported(module) for b in banned if _within(n, b))
        assert not bad, f"{module} imports {bad}"


def test_importing_a_module_loads_nothing_its_layer_forbids():
    """The same rules at run time: no module loads a forbidden one through another."""
    code = (
        "import importlib, json, sys\n"
        f"rules = {FORBIDDEN_IMPORTS!r}\n"
        "bad = {}\n"
        "for module, banned in rules.items():\n"
        "    for name in [m for m in sys.modules if m.startswith('capeval_core')]:\n"
        "        del sys.modules[name]\n"
        "    importlib.import_module(module)\n"
        "    loaded = [m for m in sys.modules for b in banned if m == b or m.startswith(b + '.')]\n"
        "    if loaded:\n"
        "        bad[module] = sorted(loaded)\n"
        "print(json.dumps(bad))\n"
    )
    assert fresh_python(code).strip() == "{}"


def test_the_rules_name_real_modules():
    import importlib.util

    for module, banned in FORBIDDEN_IMPORTS.items():
        assert importlib.util.find_spec(module) is not None, module
        for b in banned:
            assert importlib.util.find_spec(b) is not None, b


# -- no import circles -------------------------------------------------------------------------

#: the packages whose import graph must have no circle
CHECKED_PACKAGES = ("capeval_core", "capeval_ui")


def _module_files() -> dict[str, tuple[Path, bool]]:
    """Every module of :data:`CHECKED_PACKAGES`: name -> (file, is a package)."""
    root = Path(__file__).resolve().parents[2]
    out = {}
    for package in CHECKED_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the modules of the checked packages its import statements name (see
    :func:`test_no_import_circles` for what counts)."""
    import ast

    modules = _module_files()
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:  # `from package import module`
                        targets.add(f"{base}.{alias.name}")
                    elif base in modules:
                        targets.add(base)
        graph[name] = targets - {name}
    return graph


def find_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each group of modules that reach each other (Tarjan's strongly
    connected components), as the modules in import order with the first repeated at the end.

    >>> find_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    [['a', 'b', 'c', 'a']]
    >>> find_circles({"a": {"b"}, "b": set()})
    []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    circles = []
    for group in groups:
        start = min(group)
        path, seen = [start], {start}
        while True:  # walk inside the group until a module repeats
            nxt = min(w for w in graph[path[-1]] if w in group)
            if nxt in seen:
                circles.append([*path[path.index(nxt) :], nxt])
                break
            path.append(nxt)
            seen.add(nxt)
    return sorted(circles)


def test_no_import_circles():
    """No two modules of capeval_core and capeval_ui need each other, directly or through
    others: such a circle means neither can be read or tested without the other.

    What counts is every import statement a module's author wrote, wherever it stands: at
    module level; inside a function (a lazy import defers loading, nothing more: the function
    still cannot run, nor the module be tested, without the other module); and under
    ``if TYPE_CHECKING:`` (the module's annotations cannot be read without it). ``from
    package import name`` imports the module ``package.name`` where there is one, else the
    package itself. Importing a submodule is not counted as importing its parent packages'
    ``__init__``: Python loads them first, but that is its loading order, not a need the
    module states. A circle is broken by moving code to the module it belongs to, not by
    hiding an import inside a function.
    """
    graph = import_graph()
    assert "capeval_core.metrics.cider" in graph and "capeval_ui.state" in graph
    circles = find_circles(graph)
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def test_the_scoring_workers_reference_sampler_loads_neither_pandas_nor_scipy():
    """Judgments' scoring processes import sample_references on start: checking Series'
    indexes and pd.NA had made the module load pandas and scipy (0.3 s -> 1.1 s each)."""
    code = (
        "import sys\n"
        "import capeval_core.stats.pairwise, capeval_core.stats.within_systems\n"
        "print(sorted(m for m in ('pandas', 'scipy') if m in sys.modules))\n"
    )
    assert fresh_python(code).strip() == "[]"


def _package_of(module: str, modules: dict[str, tuple[Path, bool]]) -> str:
    """A module's package (a package is its own); a module directly under the top-level
    package stands for itself, as ``capeval_core.idf`` did beside ``capeval_core.metrics``."""
    if modules[module][1] or module.count(".") == 1:
        return module
    return module.rpartition(".")[0]


def test_no_import_circles_between_packages():
    """No two sibling packages (or a package and a top-level module) need each other through
    different modules: ``metrics.cider`` importing ``capeval_core.idf`` while ``idf`` imported
    ``metrics.ngrams`` made ``metrics`` and ``idf`` one unit in all but name, and loading
    either ran the other's ``__init__`` first. A package and its own subpackage (SPICE's
    ``pcfg``, the drop-in's scorer folders, which mirror pycocoevalcap's layout) are one
    unit by design and not counted."""
    modules = _module_files()
    packages: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        here = _package_of(module, modules)
        for target in targets:
            there = _package_of(target, modules)
            nested = here.startswith(there + ".") or there.startswith(here + ".")
            if there != here and not nested:
                packages.setdefault(here, set()).add(there)
    assert "capeval_core.metrics" in packages
    circles = find_circles(packages)
    assert not circles, "package circles: " + "; ".join(" -> ".join(c) for c in circles)


# -- private names stay in their module ---------------------------------------------------------

#: the project's code: its packages and the app's pages
OWN_CODE = ("capeval_core", "capeval_ui", "app_pages")


def private_uses(path: Path, package: str = "") -> list[str]:
    """Where ``path`` uses another module's private name: ``from m import _x``, or ``m._x``
    of a project module ``m`` it imported (a change inside ``m`` would break it unseen).

    Dunders are fine, and so is a private module of a package ``package`` is in (the
    drop-in's helpers, ``capeval_core.pycocoevalcap._inputs``, are its package's own).
    """
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: set[str] = set()  # names bound to project modules
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in OWN_CODE:  # `import a.b` binds a.b's path too
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level:  # relative: from .m import _x
            found += [f"from .{node.module or ''} import {a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]  # fmt: skip
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in OWN_CODE:
            inside = package == node.module or package.startswith(f"{node.module}.")
            for alias in node.names:
                module = importlib_util_find(f"{node.module}.{alias.name}")
                if module and inside:
                    modules.add(alias.asname or alias.name)  # its package's private module
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"from {node.module} import {alias.name}")
                elif module:
                    modules.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and _dotted(node.value) in modules
        ):
            found.append(f"{_dotted(node.value)}.{node.attr}")
    return found


def _dotted(node: object) -> str:
    """``a.b.c`` of a name or attribute chain, else ""."""
    import ast

    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)):
        return f"{base}.{node.attr}"
    return ""


def importlib_util_find(name: str) -> bool:
    """Whether ``name`` is a module of the project (not a function or a class)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def test_no_module_uses_another_modules_private_names():
    """The drop-in's CiderScorer imported CIDEr-D's private ``_BatchScores``, the column
    mapping the loader's ``_format_from_suffix``, the scoring engine ``batch._statistics_rows``:
    what a module shares is public, so a change inside it is seen where it is used."""
    root = Path(capeval_core.__file__).parents[1]
    files = [p for package in OWN_CODE for p in sorted((root / package).rglob("*.py"))]
    assert len(files) > 100
    used = {
        str(p.relative_to(root)): private_uses(p, ".".join(p.relative_to(root).parts[:-1]))
        for p in files
    }
    assert {name: uses for name, uses in used.items() if uses} == {}


def test_private_uses_finds_both_spellings(tmp_path):
    code = tmp_path / "m.py"
    code.write_text(
        "from capeval_core.metrics.cider import _BatchScores, cider_d_values\n"
        "from capeval_core import batch as engine\n"
        "engine._statistics_rows(1, 2)\n"
        "engine.__name__\n"
        "import capeval_core.batch\n"
        "capeval_core.batch._statistics_rows(1, 2)\n"
        "from .metrics.cider import _BatchScores as B\n"
    )
    assert sorted(private_uses(code)) == [
        "capeval_core.batch._statistics_rows",
        "engine._statistics_rows",
        "from .metrics.cider import _BatchScores",
        "from capeval_core.metrics.cider import _BatchScores",
    ]
