"""kpt's function-catalog conventions without a container runtime: the example packages (examples/kpt/<name>/)
pass as kpt's e2e runner runs them (kptexamples.py) with mpigen as an exec function in place of its image, and
image/metadata.yaml (the catalog's metadata, carried by the image) says what is true of this checkout. The same
examples run with the image in tests/image/test_image_catalog.py."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import gotools
import kptexamples
import pytest
import yaml

import mpigen
from tools import function_executable

ROOT = Path(__file__).resolve().parents[2]
CASES = kptexamples.cases(ROOT / "examples" / "kpt")
METADATA = yaml.safe_load((ROOT / "image" / "metadata.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_catalog_example_passes_with_the_exec_function(case: kptexamples.Case, tmp_path: Path) -> None:
    if kptexamples.updating():
        pytest.skip(
            "the examples' .expected/ are written by the image's run (tests/image/test_image_catalog.py)"
        )
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    function = function_executable(tmp_path)
    assert kptexamples.run_case(case, gotools.require("kpt"), env, exec_path=function) == []


def test_every_example_is_a_case_and_a_package_the_metadata_names() -> None:
    names = sorted(path.name for path in (ROOT / "examples" / "kpt").iterdir() if path.is_dir())
    assert names == sorted(case.name for case in CASES)
    urls = METADATA["examplePackageURLs"]
    assert [url.rsplit("/examples/kpt/", 1)[1] for url in urls] == names
    for case in CASES:
        assert (case.path / ".krmignore").read_text() == ".expected\n"  # kpt reads no file of .expected/
        assert (case.path / "README.md").is_file()
        assert case.image == f"localhost/mpigen:{mpigen.__version__}", case.name


def test_the_metadata_is_the_catalogs_shape_and_agrees_with_the_image_and_the_package() -> None:
    spec = importlib.util.spec_from_file_location("mpigen_image_build", ROOT / "tools" / "image.py")
    assert spec is not None and spec.loader is not None
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    assert set(METADATA) == {"image", "description", "tags", "sourceURL", "examplePackageURLs", "license"}
    assert METADATA["image"] == builder.IMAGE_NAME
    assert set(METADATA["tags"]) == {"generator", "mutator", "validator"}
    assert METADATA["sourceURL"].startswith(builder.SOURCE + "/")
    assert all(url.startswith(builder.SOURCE + "/tree/main/") for url in METADATA["examplePackageURLs"])
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert METADATA["license"] == builder.LICENSE == project["license"]
