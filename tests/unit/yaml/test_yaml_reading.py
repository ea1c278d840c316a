"""The YAML mpigen reads is the YAML Kubernetes reads, and hostile input is refused with one line that
says where (mpigen/yaml/reader.py, through every shell)."""

from __future__ import annotations

import json
import subprocess

import pytest
import pythons
from click.testing import CliRunner
from hostile_yaml import SHAPES

from mpigen.cli import cli
from mpigen.yaml import reader as yamlread
from mpigen.yaml.load import InputError, load_documents
from mpigen.yaml.reader import MAX_DEPTH


def load(text: str) -> list[object]:
    return [doc.data for doc in load_documents(text, "in.yaml")]


def refusal(text: str) -> str:
    with pytest.raises(InputError) as caught:
        load(text)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_merge_keys_are_read_as_kubectl_reads_them() -> None:
    text = "base: &base {image: a, name: x}\nother: &other {name: w, port: 1}\nc:\n  <<: [*base, *other]\n  name: z\n"
    assert load(text) == [
        {
            "base": {"image": "a", "name": "x"},
            "other": {"name": "w", "port": 1},
            "c": {"image": "a", "name": "z", "port": 1},
        }
    ]
    assert load("a: &a {x: 1}\nb: {<<: *a}\n")[0] == {"a": {"x": 1}, "b": {"x": 1}}


def test_duplicate_keys_are_refused_beside_a_merge_key() -> None:
    assert (
        refusal("a: &a {x: 1}\nb:\n  <<: *a\n  w: 1\n  w: 2\n")
        == 'in.yaml: line 5, column 3: b: duplicate key "w"'
    )
    assert "a merge key (<<) takes a mapping" in refusal("b:\n  <<: 5\n")


def test_a_quoted_merge_key_is_a_plain_key() -> None:
    assert load('"<<": 1\n') == [{"<<": 1}]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("metadata: !!map [1]\n", 'line 1, column 11: metadata: tag "!!map" is not supported on a sequence'),
        ("labels: !!timestamp x\n", 'line 1, column 9: labels: tag "!!timestamp" is not supported'),
        ("a: !!binary aGk=\n", 'tag "!!binary" is not supported'),
        ("a: !!set {x}\n", 'tag "!!set" is not supported on a mapping'),
        ("a: !!omap [b: 1]\n", 'tag "!!omap" is not supported on a sequence'),
        (
            "a: !!python/object/apply:os.system [ls]\n",
            'tag "!!python/object/apply:os.system" is not supported',
        ),
        ("a: !custom x\n", 'tag "!custom" is not supported'),
        ("a: !!int x\n", 'a: "x" is not an integer'),
        ("a: !!int 0b_\n", 'a: "0b_" is not an integer'),
        ("a: !!bool maybe\n", 'a: "maybe" is not a boolean'),
        (
            "a: 9223372036854775808\n",
            'a: "9223372036854775808" is outside the 64-bit integers Kubernetes reads',
        ),
        ("a: -9223372036854775809\n", "is outside the 64-bit integers"),
        ("labels: {a: " + "5" * 5000 + "}\n", 'labels.a: "' + "5" * 80 + '…" (5,000 characters) is outside'),
        ("a: .nan\n", 'a: ".nan" is not a number JSON or Kubernetes can carry'),
        ("a: [-.inf]\n", 'a[0]: "-.inf" is not a number'),
        ("a: 1.0e+999\n", '"1.0e+999" is too large for a number (kubectl would send the string "1.0e+999"'),
        ("1: x\n", 'line 1, column 1: mapping key 1 is not a string (quote it: "1")'),
        ("? [a]\n: b\n", "mapping keys must be strings"),
        ("a: *nothing\n", "alias *nothing names no anchor before it"),
        ("a: &a [*a]\n", "alias *a refers to a node that holds it"),
        ("a: \x01\n", "line 1, column 4: character U+0001 is not allowed in YAML"),
        ("é: ü\x7f\n", "line 1, column 5: character U+007F"),
    ],
)
def test_what_kubernetes_does_not_read_is_refused_where_it_is(text: str, message: str) -> None:
    assert message in refusal(text)


def test_the_core_tags_and_yaml_1_1_scalars_are_read() -> None:
    text = "- !!str 5\n- !!float 1\n- !!bool yes\n- !!null ''\n- ~\n- 0x1F\n- 017\n- 1:30\n- 2001-12-14\n- 9223372036854775807\n- !!seq [1]\n- !!map {a: 1}\n- =\n"
    assert load(text) == [
        ["5", 1.0, True, None, None, 31, 15, "1:30", "2001-12-14", 2**63 - 1, [1], {"a": 1}, "="]
    ]


@pytest.mark.parametrize("opener", ["[", "{a: ", "- ", "[{a: "])
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 30_000, 200_000])
def test_nesting_is_bounded_before_anything_recurses(opener: str, depth: int) -> None:
    assert f"nesting is deeper than {MAX_DEPTH} levels" in refusal(opener * depth)


def test_nesting_up_to_the_limit_is_read() -> None:
    assert load("[" * MAX_DEPTH + "]" * MAX_DEPTH)


def test_aliases_are_counted_by_what_they_expand_to_not_plain_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlread, "MAX_ALIAS_VALUES", 1000)
    plain = "[" + "1, " * 5000 + "1]"  # more plain values than the alias bound: no alias, so no bomb
    assert len(load(plain)[0]) == 5001  # type: ignore[arg-type]
    bomb = (
        "a: &a ["
        + ", ".join(["x"] * 10)
        + "]\n"
        + "".join(f"{c}: &{c} [" + ", ".join([f"*{p}"] * 10) + "]\n" for p, c in zip("abc", "bcd"))
    )
    assert "c[8]: too large (more than 1000 values once YAML aliases are expanded)" in refusal(bomb)


def test_values_and_documents_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlread, "MAX_VALUES", 1000)
    monkeypatch.setattr(yamlread, "MAX_DOCUMENTS", 10)
    assert "too large (more than 1,000 values)" in refusal("[" + "1," * 1000 + "1]")
    assert len(load("[" + "1," * 990 + "1]")[0]) == 991  # type: ignore[arg-type]
    assert "more than 10 YAML documents" in refusal("---\na: 1\n" * 11)
    assert len(load("---\na: 1\n" * 10)) == 10


REPRODUCERS = [  # `kind: MPIJob` in each, or validate skips the file as none of its business
    "kind: MPIJob\nmetadata: !!map [1]\n",
    "kind: MPIJob\nspec: " + "[" * 30_000 + "\n",
    "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: pi, labels: !!timestamp x}\n",
    "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: pi, labels: {a: " + "5" * 5000 + "}}\n",
    "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {kind: MPIJob, spec: "
    + "[" * 30_000
    + "\n",
]


@pytest.mark.parametrize("command", [["render"], ["render", "-o", "json"], ["validate"], ["krm"]])
@pytest.mark.parametrize(
    "text", REPRODUCERS, ids=["map-on-seq", "deep", "timestamp", "huge-int", "deep-resource-list"]
)
def test_the_issues_reproducers_are_refused_with_one_line(command: list[str], text: str) -> None:
    result = CliRunner().invoke(cli, command, input=text, catch_exceptions=False)
    said = result.stderr + (result.stdout if command == ["validate"] else "")
    assert result.exit_code == 1, said
    assert "internal error" not in said
    assert len(said.strip().splitlines()) == 1, said


def test_a_name_with_a_newline_cannot_forge_a_line() -> None:
    job = (
        'apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: "pi\\nINJECTED: line"\nspec: {}\n'
    )
    result = CliRunner().invoke(cli, ["render"], input=job, catch_exceptions=False)
    assert result.exit_code == 1
    assert all(line.startswith("<stdin>: ") for line in result.stderr.splitlines()), result.stderr
    assert "INJECTED" in result.stderr and "\\n" in result.stderr
    result = CliRunner().invoke(cli, ["validate", "-o", "json", "-"], input=job, catch_exceptions=False)
    for resource in json.loads(result.stdout)["resources"]:
        assert "\n" not in resource.get("msg", "") and all(
            "\n" not in e["msg"] for e in resource.get("validationErrors") or []
        )


def test_a_long_value_is_shortened_in_messages() -> None:
    import yaml
    from jobs import V2BETA1, make_job

    job = yaml.safe_dump(make_job(V2BETA1, name="b" * 200_000))
    result = CliRunner().invoke(cli, ["render"], input=job, catch_exceptions=False)
    assert result.exit_code == 1
    assert '…" (200,000 characters)' in result.stderr and len(result.stderr) < 5000


@pytest.mark.parametrize("field", ["int", "str", "bool", "none", "a[0]"])
def test_unknown_fields_named_like_pydantic_branches_are_reported_at_their_path(field: str) -> None:
    job = f'apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {{name: pi}}\n"{field}": 1\nspec:\n  "{field}": 5\n'
    result = CliRunner().invoke(cli, ["render"], input=job, catch_exceptions=False)
    assert result.exit_code == 1, result.stderr
    assert (
        f'spec{"." + field if field.isalnum() else "[" + json.dumps(field) + "]"}: unknown field "{field}"'
        in result.stderr
    )
    assert (
        f'MPIJob/pi: {field if field.isalnum() else "[" + json.dumps(field) + "]"}: unknown field "{field}"'
        in result.stderr
    )


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("command", [["render"], ["krm"]])
def test_a_16_mib_input_of_any_shape_is_answered_within_seconds_and_bounded_memory(
    shape: str, command: list[str]
) -> None:
    from mpigen.yaml.load import MAX_INPUT_BYTES

    data = SHAPES[shape](MAX_INPUT_BYTES)[:MAX_INPUT_BYTES].encode()
    proc = _run_with_input(command, data)  # a hang fails by the timeout; benchmarks/bench_reading.py times it
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert b"internal error" not in proc.stderr and len(proc.stderr.splitlines()) <= 1


def _run_with_input(command: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    """mpigen in a process that may not use more than 2 GiB of memory (as tests/unit/shells/test_reading.py runs it)."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [*pythons.mpigen_argv(), *command],
        input=data,
        capture_output=True,
        preexec_fn=limit,
        timeout=300,
        check=False,
    )


def test_a_passed_through_object_no_cluster_could_store_is_refused() -> None:
    big = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n" + "".join(
        f"  k{i}: {'v' * 100}\n" for i in range(20_000)
    )
    result = CliRunner().invoke(cli, ["render"], input=big, catch_exceptions=False)
    assert result.exit_code == 1 and result.stdout == ""
    assert (
        result.stderr.startswith("<stdin>: ConfigMap/big: too large: ")
        and "more than the 1.5 MiB etcd stores" in result.stderr
    )


# kubectl's reading (sigs.k8s.io/yaml, go-yaml v2); tests/unit/yaml/test_goyaml.py holds it to the real thing.
@pytest.mark.parametrize("fast", [True, False])
def test_plain_scalars_mean_what_kubectl_sends(fast: bool) -> None:
    words = [
        "12:30",
        "0o17",
        "08",
        "y",
        "n",
        "Y",
        "N",
        "+.5",
        "0X1F",
        "1.e3",
        "1e3",
        "1_e3",
        ".5_0",
        "2.0",
        "0789",
        "yes",
        "1:5:3.",
    ]
    text = "".join(f"k{i}: {word}\n" for i, word in enumerate(words))
    assert list(yamlread.read_stream(text, fast=fast)[0].values()) == [
        "12:30",
        15,
        8,
        True,
        False,
        True,
        False,
        0.5,
        31,
        1000,
        1000,
        1000,
        0.5,
        2,
        789,
        True,
        "1:5:3.",
    ]


def test_a_config_map_keeps_a_time_as_kubectl_sends_it() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  start: 12:30\n"
    result = CliRunner().invoke(cli, ["render", "--allow-empty"], input=text, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "start: '12:30'\n" in result.stdout


@pytest.mark.parametrize(
    "text",
    [
        "a: <<\nb:\n  <<: {a: '1'}\n",
        "b:\n  <<: {a: '1'}\nc: <<\n",
        "a: [<<]\nb: {<<: {a: '1'}}\n",
        "a: {<<: <<}\n",
    ],
)
def test_a_merge_key_is_one_by_its_position_not_its_text(text: str) -> None:
    if "<<: <<" in text:
        assert "a merge key (<<) takes a mapping" in refusal(text)
        return
    document = load(text)[0]
    assert isinstance(document, dict) and document["b"] == {"a": "1"}
    assert "<<" in json.dumps(document)  # the value `<<` stays the string


def test_a_key_before_a_merge_that_sets_it_too_is_refused() -> None:
    # YAML: the mapping's own key wins; go-yaml v2 (kubectl): the merge, read later, replaces it
    assert 'key "a" comes before the merge key (<<) that also sets it' in refusal(
        "b:\n  a: 1\n  <<: {a: 2}\n"
    )
    assert load("b:\n  <<: {a: 2}\n  a: 1\n") == [{"b": {"a": 1}}]
    assert load("b:\n  c: 1\n  <<: {a: 2}\n") == [{"b": {"c": 1, "a": 2}}]


@pytest.mark.parametrize("line_break", ["\r", "\r\n", "\x85", "\u2028", "\u2029"])
@pytest.mark.parametrize("command", [["render"], ["validate"], ["krm"]])
def test_any_line_break_before_deep_nesting_is_refused_with_a_position(
    line_break: str, command: list[str]
) -> None:
    text = line_break.join(
        ["apiVersion: kubeflow.org/v2beta1", "kind: MPIJob", "metadata: {name: pi}", "spec: " + "[" * 2000]
    )
    if command == ["krm"]:
        text = line_break.join(
            [
                "apiVersion: config.kubernetes.io/v1",
                "kind: ResourceList",
                "items:",
                "- " + text.replace(line_break, line_break + "  "),
            ]
        )
    result = CliRunner().invoke(cli, command, input=text, catch_exceptions=False)
    said = result.stderr + (result.stdout if command != ["render"] else "")
    assert result.exit_code == 1, said
    line = 7 if command == ["krm"] else 4
    assert "nesting is deeper than 64 levels" in said and f"line {line}, column" in said, said
