"""mpigen reads YAML as kubectl reads it. Each generated word and stream is read by mpigen (its own fast
reader and libyaml's) and by tests/goyaml: apimachinery's YAMLOrJSONDecoder over sigs.k8s.io/yaml and
go-yaml v2, at the versions Kubernetes v1.37.2 pins, built by tests/cluster/gotools.py, printing the JSON
kubectl would send. The two agree, or mpigen refuses for one of the reasons below, where kubectl's
reading loses or changes the value."""

from __future__ import annotations

import json
import random
import subprocess
from fractions import Fraction
from typing import Any

import pytest
from cluster import gotools
from fuzz import GOYAML_WORDS, goyaml_stream, scalar_words

from mpigen.yaml.reader import YamlProblem, read_stream

pytestmark = pytest.mark.slow

# Where mpigen refuses what kubectl reads: the value kubectl would send is not the one written.
REFUSALS = (
    "is outside the 64-bit integers Kubernetes reads",  # kubectl sends an inexact float or a uint64
    "is too large for a number",  # kubectl sends the text as a string
    "is not a number JSON or Kubernetes can carry",  # kubectl fails on a value `.nan`, writes a key `.NaN` as ".nan"
    "is not a string (quote it",  # kubectl turns a key `1`, `y` or `1.5` into "1", "true", "1.5"
    "comes before the merge key (<<) that also sets it",  # YAML and kubectl disagree
    "duplicate key",  # kubectl keeps the last
    "is not supported",  # a tag kubectl ignores (`!!python/...`, `!custom`) or reads otherwise (`!!map [1]`)
    # mpigen's own bounds, not a reading
    "nesting is deeper than",
)


def kubectl_reads(streams: list[str]) -> list[dict[str, Any]]:
    goyaml = gotools.require("goyaml")
    done = subprocess.run(
        [goyaml], input=json.dumps(streams), capture_output=True, text=True, check=True, timeout=600
    )
    results: list[dict[str, Any]] = json.loads(done.stdout)
    assert len(results) == len(streams)
    return results


def canonical(value: Any) -> Any:
    """A JSON value with numbers compared by value (kubectl writes 1.0 as 1) and booleans kept apart."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return ("number", Fraction(value))
    if isinstance(value, list):
        return [canonical(item) for item in value]
    assert isinstance(value, dict)
    return {key: canonical(item) for key, item in value.items()}


def mpigen_reads(text: str, fast: bool) -> list[Any] | str:
    try:
        return [document for document in read_stream(text, fast=fast) if document is not None]
    except YamlProblem as problem:
        return str(problem)


def disagreements(streams: list[str]) -> tuple[list[str], int]:
    """Every stream mpigen reads otherwise than kubectl, and how many it refuses for a reason in REFUSALS."""
    found: list[str] = []
    refused = 0
    for text, kubectl in zip(streams, kubectl_reads(streams)):
        for fast in (True, False):
            ours = mpigen_reads(text, fast)
            if "error" in kubectl:
                if not isinstance(ours, str):
                    found.append(f"{text!r}: kubectl refuses ({kubectl['error']}), mpigen reads {ours!r}")
            elif isinstance(ours, str):
                if not any(reason in ours for reason in REFUSALS):
                    found.append(
                        f"{text!r}: kubectl reads {kubectl.get('documents', [])!r}, mpigen refuses: {ours}"
                    )
                refused += 1
            elif canonical(ours) != canonical(kubectl.get("documents", [])):
                found.append(
                    f"{text!r} (fast={fast}): kubectl reads {kubectl.get('documents', [])!r}, mpigen {ours!r}"
                )
    return found, refused


def test_plain_words_are_read_as_kubectl_reads_them() -> None:
    words = scalar_words(random.Random(0), 20_000)
    found, refused = disagreements(
        [f"v: {word}\n" for word in words] + [f"- {word}\n" for word in GOYAML_WORDS]
    )
    assert not found, f"{len(found)} of {len(words)} words:\n" + "\n".join(found[:40])
    assert refused < len(words) // 50  # refusals are the exception: most numbers are read


def test_the_known_differences_with_pyyaml_are_kubectls() -> None:
    streams = ["v: 12:30\n", "v: 0o17\n", "v: 08\n", "v: y\n", "v: N\n", "v: +.5\n", "v: 0X1F\n", "v: 1.e3\n"]
    assert [mpigen_reads(text, fast) for text in streams for fast in (True, False)] == [
        doc for value in ("12:30", 15, 8, True, False, 0.5, 31, 1000) for doc in ([{"v": value}],) * 2
    ]
    assert [result["documents"] for result in kubectl_reads(streams)] == [
        [{"v": value}] for value in ("12:30", 15, 8, True, False, 0.5, 31, 1000)
    ]


def test_generated_streams_are_read_as_kubectl_reads_them() -> None:
    rng = random.Random(1)
    streams = [goyaml_stream(rng) for _ in range(5000)]
    found, _ = disagreements(streams)
    assert not found, f"{len(found)} of {len(streams)} streams:\n" + "\n".join(found[:40])


def test_the_golden_inputs_and_examples_are_read_as_kubectl_reads_them() -> None:
    from fuzz import seeds

    texts = [
        text for text in seeds() if text.isprintable() or text.encode("utf-8", "replace").decode() == text
    ]
    found, _ = disagreements(texts)
    assert not found, "\n".join(found[:20])
