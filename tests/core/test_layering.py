"""capeval_core never imports streamlit (house style, principle 1)."""

from __future__ import annotations

import pkgutil

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
#: systems -> batch -> metrics and never passes through judgments.
FORBIDDEN_IMPORTS = {
    "capeval_core.batch": ("capeval_core.systems", "capeval_core.judgments"),
    "capeval_core.systems": ("capeval_core.judgments",),
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
