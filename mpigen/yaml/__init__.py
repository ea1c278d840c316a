"""YAML in and out, and nothing else reads or writes it. Public: `load` (bytes -> documents, every
limit held as it reads) and `dump` (objects -> YAML or JSON, the only serialiser). `reader` reads
parser events with an explicit stack and `scalars` says what a plain scalar means; `_fast_read` and
`_fast_emit` stand in for libyaml's parser and PyYAML's dumper where they can tell the same answer,
and hand everything else to the library.
"""
