"""Arrow arrays built from Python values at their exact size, without Arrow's builder."""

from __future__ import annotations

from array import array
from itertools import accumulate

import pyarrow as pa


def binary_array(values: list[bytes | None], binary: pa.DataType) -> pa.Array:
    """`pa.array(values, type=binary)` of bytes values, built at its exact size: Arrow's
    builder grows its data buffer by doubling and copies it each time (7% of ingest's samples
    under py-spy, the pages' column; ~0.3 CPU s of a 2 GB run's 16 measured); here the total
    is known and one join fills it. An array too large for 32-bit offsets is left to Arrow,
    which refuses it as ever."""
    present = [value for value in values if value is not None]
    data = b"".join(present)
    large = binary == pa.large_binary()
    if not large and (binary != pa.binary() or len(data) > _MAX_32_BIT_OFFSET):
        return pa.array(values, type=binary)
    lengths = (0 if value is None else len(value) for value in values)
    offsets = array("q" if large else "i", accumulate(lengths, initial=0))
    nulls = len(values) - len(present)
    validity = None
    if nulls:
        validity = pa.array([value is not None for value in values]).buffers()[1]
    buffers = [validity, pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(binary, len(values), buffers, null_count=nulls)


_MAX_32_BIT_OFFSET = 2**31 - 1


# A text type over the same buffers holding bytes: a view of one reads them as the other.
BINARY_OF_TEXT = {pa.large_string(): pa.large_binary(), pa.string(): pa.binary()}


def text_array_from_utf8(values: list[bytes | None], text: pa.DataType) -> pa.Array:
    """A text array of values given as their UTF-8 (bytes, or None), built at its exact size
    and checked by Arrow's own UTF-8 validation. Given bytes for a text type, Arrow's builder
    decodes each value into a Python string to check it, on top of its doubling copies (~9%
    of synatra's SFT step, the renderings' columns, by py-spy).

    Raises:
        pa.ArrowInvalid: a value that is not UTF-8, as Arrow's builder refuses it.
        TypeError: a value that is not bytes.
    """
    built = binary_array(values, BINARY_OF_TEXT[text]).view(text)
    built.validate(full=True)
    return built
