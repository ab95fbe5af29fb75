"""Hugging Face `datasets` features of a release config, written from its Arrow schema.

`datasets` reads a Parquet file's features from the schema's `huggingface` metadata; without
it, an image column is a plain struct of bytes and path. So each image struct is declared an
`Image`, and every other column gets the feature `datasets` would infer from its Arrow type.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from bigaction_assets.release.shards import HF_METADATA_KEY

# An Image feature's storage: the image file's bytes and a name (`<image_sha>.<format>`).
IMAGE_STRUCT = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
_VALUE_TYPES = {
    pa.string(): "string", pa.large_string(): "large_string", pa.binary(): "binary",
    pa.int32(): "int32", pa.int64(): "int64", pa.float64(): "float64", pa.bool_(): "bool",
}  # fmt: skip


def feature(kind: pa.DataType) -> dict[str, Any]:
    """The feature of one Arrow type: `Image` for the image struct, lists and structs by their
    parts, plain values by their dtype."""
    if kind.equals(IMAGE_STRUCT):
        return {"_type": "Image"}
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return {"_type": "List", "feature": feature(kind.value_type)}
    if pa.types.is_struct(kind):
        return {kind.field(i).name: feature(kind.field(i).type) for i in range(kind.num_fields)}
    if kind in _VALUE_TYPES:
        return {"dtype": _VALUE_TYPES[kind], "_type": "Value"}
    raise TypeError(f"no datasets feature is written for Arrow type {kind}")


def with_features(schema: pa.Schema) -> pa.Schema:
    """`schema` with its features in the `huggingface` metadata."""
    features = {field.name: feature(field.type) for field in schema}
    metadata = {HF_METADATA_KEY: json.dumps({"info": {"features": features}}).encode()}
    return schema.with_metadata(metadata)
