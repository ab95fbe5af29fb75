"""Rows that carry the UTF-8 of their long text values, for the lake's writer to hand over."""

from __future__ import annotations

from typing import Any


class EncodedRow(dict[str, Any]):
    """A row whose long text values also come as their UTF-8, encoded already for another
    purpose: `validated_table` hands those bytes to Arrow, which otherwise encodes each string
    again (a page of any non-ASCII character is transcoded, and its UTF-8 then cached on the
    string for as long as it lives). To every other reader it is a dict.

    The bytes are kept with the very string they were encoded from, and given out only while
    the row still holds that string: a value put in its place (a scrubbed page, say), by any
    means, is stored as itself."""

    __slots__ = ("_literals", "_utf8")

    def __init__(
        self,
        values: dict[str, Any],
        utf8: dict[str, bytes],
        literals: dict[str, bytes] | None = None,
    ) -> None:
        super().__init__(values)
        self._utf8 = {name: (values[name], encoded) for name, encoded in utf8.items()}
        self._literals = {name: (values[name], text) for name, text in (literals or {}).items()}

    def carries(self, name: str) -> bool:
        """Whether the row came with `name`'s UTF-8."""
        return name in self._utf8

    def utf8_of(self, name: str) -> bytes | None:
        """`name`'s UTF-8, if the row still holds the string it was encoded from."""
        kept = self._utf8.get(name)
        if kept is None or self.get(name) is not kept[0]:
            return None
        return kept[1]

    def literal_of(self, name: str) -> bytes | None:
        """`name` as a JSON string literal, if written with the row and still the row's."""
        kept = self._literals.get(name)
        if kept is None or self.get(name) is not kept[0]:
            return None
        return kept[1]

    def take_literal(self, name: str) -> bytes | None:
        """`name` as a JSON string literal (orjson's), once, if it was written with the row
        and the row still holds that string: the raw step needs it once, and then not held."""
        written = self.literal_of(name)
        self._literals.pop(name, None)
        return written
