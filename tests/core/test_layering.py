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
