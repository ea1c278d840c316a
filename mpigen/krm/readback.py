"""The function's limits on what it writes: nothing it could not read back (mpigen.krm.items reads a
ResourceList of up to MAX_LIST_BYTES; an item, or a list read whole, holds at most MAX_VALUES values).

A list cut into its items is read back as its header (with `results`) and, when it holds a job, each
item on its own, as `render` reads a document; the output holds no job. A list read whole (another
layout, or one whose output has line breaks the cut does not take) is one document.
"""

from __future__ import annotations

import re
from typing import Any

from mpigen.krm import MAX_LIST_BYTES, STDIN, layout
from mpigen.krm.items import Listing
from mpigen.yaml.load import value_count
from mpigen.yaml.reader import MAX_VALUES


def refused_output(
    listing: Listing, generated: list[list[dict[str, Any]]], output: str, results: list[dict[str, Any]]
) -> str:
    """Why the function could not read `output` back, if it could not: then it is not written, so that
    the function accepts every list it writes. `generated`: the objects of each job compiled."""
    ascii = output.isascii()  # then its length is its size, and no line break but \r and \n is in it
    size = len(output) if ascii else len(output.encode("utf-8", "surrogatepass"))
    if size > MAX_LIST_BYTES:
        return (
            f"mpigen: {STDIN}: the output ResourceList would be {size / 2**20:,.1f} MiB, over the"
            f" {MAX_LIST_BYTES // 2**20} MiB the function reads; compile fewer jobs at once"
        )
    read_whole = listing.cut is None or (
        "\r" in output if ascii else re.search(layout.OTHER_BREAKS, output) is not None
    )
    header = {key: value for key, value in listing.header.items() if key != "items"}
    values = _values([header, results])
    if read_whole:  # the items too (those of the jobs counted, which only overestimates)
        values += _values(listing.items()) + sum(_values(objects) for objects in generated)
    if values > MAX_VALUES:
        return (
            f"mpigen: {STDIN}: the output ResourceList would hold more than {MAX_VALUES:,} values where it is"
            " read whole (outside its items, or a list not laid out as kyaml writes it); compile fewer jobs at once"
        )
    return ""


def _values(data: Any) -> int:
    """How many values reading `data` back counts (mpigen.yaml.load.value_count)."""
    return value_count(data)
