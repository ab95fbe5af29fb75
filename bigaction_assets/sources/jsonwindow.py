"""A window onto a binary file for the streaming JSON array reader (`jsonstream`)."""

from __future__ import annotations

from io import BufferedIOBase


class ByteWindow:
    """A window onto a binary file, as bytes and, for the slow path, as Latin-1 text.

    Latin-1 is one character per byte, so JSON's (ASCII) structure is found exactly in the text
    while character positions stay byte offsets; each element's bytes are then decoded as UTF-8
    on their own, so one bad byte spoils one record, not the file.

    The window is one buffer, kept for the whole file: the bytes still needed move to its
    front and the next chunk is read in after them, into the same memory. Reading each chunk
    into a new object and joining it to the rest, as this did before, copied every byte of the
    file once more and touched a fresh 16 MB of memory per chunk, which the kernel had to fault
    in and zero first (reading 2.2 GB: 0.89x the CPU, 55 MB less peak memory). `data` is that
    buffer, a bytearray: callers read it in place and take a record's own bytes with `take`,
    never keeping a view of it past a call to `more`.
    """

    def __init__(self, handle: BufferedIOBase, chunk_bytes: int) -> None:
        self.handle = handle
        self.chunk_bytes = chunk_bytes
        self.data = bytearray()
        self._text: str | None = ""
        self.eof = False
        self.dropped = 0  # bytes of the file before self.data[0]
        self.counted_to = 0  # file offset up to which lines are counted
        self.line = 1

    @property
    def text(self) -> str:
        """The window as Latin-1 text, made only when the slow path needs it."""
        if self._text is None:
            self._text = self.data.decode("latin-1")
        return self._text

    def more(self, keep_from: int, at_least: int = 0) -> bool:
        """Drop the bytes before window position `keep_from` (what is kept starts the window)
        and append the next chunk; False when the file has no more. The caller's positions
        move back by `keep_from` either way."""
        self.locate(keep_from)  # count the lines about to be dropped
        data = self.data
        kept = len(data) - keep_from
        if keep_from:
            with memoryview(data) as whole:
                whole[:kept] = whole[keep_from:]  # the bytes still needed, to the front
        size = kept if self.eof else kept + max(self.chunk_bytes, at_least)
        if len(data) < size:
            data.extend(bytes(size - len(data)))  # grows only past its largest size yet
        else:
            del data[size:]  # within what it holds: the same memory
        got = 0
        if not self.eof:
            with memoryview(data) as whole, whole[kept:] as room:
                got = self.handle.readinto(room)
            del data[kept + got :]
            self.eof = not got
        self._text = None
        self.dropped += keep_from
        return got > 0

    def take(self, start: int, end: int) -> bytes:
        """The window's bytes from `start` to `end`, as bytes of their own."""
        with memoryview(self.data) as whole:
            return bytes(whole[start:end])

    def locate(self, position: int) -> tuple[int, int]:
        """(line, byte offset) of a window position at or after the last one located."""
        self.line += self.data.count(b"\n", self.counted_to - self.dropped, position)
        self.counted_to = self.dropped + position
        return self.line, self.counted_to

    def passed(self, start: int, end: int) -> None:
        """The caller located `start` and read up to `end`: when no line ends in between (one
        record per line), later counting can start from `end` (a search for one newline is
        far cheaper than counting them over megabytes)."""
        if self.data.find(b"\n", start, end) < 0:
            self.counted_to = self.dropped + end
