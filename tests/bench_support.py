"""Bench scripts as modules for the tests (bench/ is a folder of scripts, not a package).

Not a conftest: test modules import it (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench_module(name: str) -> ModuleType:
    """``bench/<name>.py`` run as the module ``name``, registered in ``sys.modules`` before it runs (a dataclass
    defined there looks its module up by name); each call runs the script's top level again."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
