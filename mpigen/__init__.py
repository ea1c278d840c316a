"""mpigen: compile Kubeflow MPIJobs into plain Kubernetes manifests.

    import mpigen
    objects = mpigen.compile(job_dict, mpigen.Options(namespace="ml"))

The compiler is pure (no I/O, clock or environment); `CompileError.issues` lists every problem with
its field path.
"""

from __future__ import annotations

import importlib

__version__ = "0.2.0"

__all__ = ["Compilation", "CompileError", "Issue", "Options", "__version__", "compile", "compile_job"]

TYPE_CHECKING = False  # not typing's: importing the package (as `mpigen.cli` does first) loads nothing
if TYPE_CHECKING:
    from typing import Any

    from mpigen.compiler import Compilation, compile, compile_job
    from mpigen.errors import CompileError, Issue
    from mpigen.options import Options

# Each name's module, loaded on first use: importing the package (as `mpigen.cli` does first) costs
# nothing, so the command line sets itself up before anything heavy loads.
_LAZY = {
    "compile": "mpigen.compiler",
    "compile_job": "mpigen.compiler",
    "Compilation": "mpigen.compiler",
    "CompileError": "mpigen.errors",
    "Issue": "mpigen.errors",
    "Options": "mpigen.options",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mpigen' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
