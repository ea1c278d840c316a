"""The documentation site's MkDocs hooks (mkdocs.yml, `hooks:`): a build fails while a generated reference
page (tools/docgen.py) is not what the code says now, so the site never shows a stale reference.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
ROOT = TOOLS.parent


def on_pre_build(config: Any) -> None:
    """Before anything is built: every generated page of the site's docs_dir is current."""
    for path in (str(TOOLS), str(ROOT)):  # docgen beside this file; mpigen from the checkout
        if path not in sys.path:
            sys.path.append(path)
    import docgen  # deferred: loads mpigen, which the hook's module needs only when a build runs

    behind = docgen.stale(docgen.generate(), Path(config["docs_dir"]) / "reference")
    if behind:
        errors: Any = importlib.import_module("mkdocs.exceptions")  # mkdocs: the docs extra's
        raise errors.PluginError(docgen.stale_message(behind))
