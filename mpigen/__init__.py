"""mpigen: compile Kubeflow MPIJobs into plain Kubernetes manifests.

    import mpigen
    objects = mpigen.compile(job_dict, mpigen.Options(namespace="ml"))

The compiler is pure (no I/O, clock or environment); `CompileError.issues` lists every problem with
its field path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mpigen.errors import CompileError, Issue
from mpigen.options import Options

__version__ = "0.2.0"

__all__ = ["Compilation", "CompileError", "Issue", "Options", "__version__", "compile", "compile_job"]

if TYPE_CHECKING:
    from mpigen.compiler import Compilation, compile, compile_job


def __getattr__(name: str) -> Any:
    # The compiler (and pydantic behind it) loads on first use, keeping `mpigen --help` fast.
    if name in ("compile", "compile_job", "Compilation"):
        from mpigen import compiler

        return getattr(compiler, name)
    raise AttributeError(f"module 'mpigen' has no attribute {name!r}")
