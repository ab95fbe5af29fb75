"""Finding personal data in a text fast: most text holds none, so each kind's precise pattern
runs only where that kind could start — over the whole text when it holds the literal the
pattern starts with (`eyJ`, `sk-`), else in small windows around cheap signs (an `@`, a
credential's name, a run of enough digits). A match that reaches a window's end is matched
again on the whole text, so the windows change speed, never results."""

from __future__ import annotations

import re
from bisect import bisect_right

from bigaction_assets.privacy.detectors import DETECTORS, PRIORITY, Detector, Finding, Where

# digits and the separators numbers are written with, 7+ characters: where an address, a phone
# number or a card can be
_NUMBER_RUN = re.compile(r"\d[\d .()\-/]{6,}+")
_LOOKAHEAD = 3  # no pattern looks further past its match than this
MIN_CHARS = 6  # no kind fits in fewer (`a@b.co`, `pin=123`)


class _Text:
    """A text and what its windows are computed from, each worked out once, when first asked."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lower: str | None = None
        self._reversed: str | None = None
        self._runs: list[tuple[int, int, int, int]] | None = None

    @property
    def reversed(self) -> str:
        if self._reversed is None:
            self._reversed = self.text[::-1]
        return self._reversed

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower

    def runs(self) -> list[tuple[int, int, int, int]]:
        """(start, end, digits, dots) of every run of digits and separators of 7+ characters."""
        if self._runs is None:
            self._runs = []
            for match in _NUMBER_RUN.finditer(self.text):
                run = match.group(0)
                dots = run.count(".")
                digits = len(run) - dots - sum(map(run.count, " ()-/"))
                self._runs.append((match.start(), match.end(), digits, dots))
        return self._runs

    def windows(self, where: Where) -> list[tuple[int, int]]:
        """Where a kind can match, as merged (start, end) windows; [] when nowhere."""
        size = len(self.text)
        if where.literals:
            return [(0, size)] if any(s in self.lower for s in where.literals) else []
        starts: list[tuple[int, int]] = []
        if where.near:
            lower = self.lower
            for needle in where.near:
                at = lower.find(needle)
                while at >= 0:
                    reach = 0  # how far back the kind's start can lie, read on the reversed text
                    if where.back is not None:
                        reach = where.back.match(self.reversed, size - at).end() - (size - at)
                    end = at + len(needle)
                    if where.ahead is not None:
                        end = where.ahead.match(self.text, end).end()
                    starts.append((at - reach, end))
                    at = lower.find(needle, at + 1)
            if not starts:
                return starts
        elif where.digits:
            starts = [
                (start, end)
                for start, end, digits, dots in self.runs()
                if digits >= where.digits and dots >= where.dots
            ]
        elif where.anchor is not None:
            starts = [m.span() for m in where.anchor.finditer(self.text)]
        return _merge(starts, where.before, where.after, size) if starts else starts


def _merge(
    spans: list[tuple[int, int]], before: int, after: int, size: int
) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        start, end = max(0, start - before), min(size, end + after)
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _scan(detector: Detector, text: str, windows: list[tuple[int, int]]) -> list[Finding]:
    """Every match in the windows. For kinds marked `overlap` (credentials: a value may
    swallow the name of the next one, `Bearer a1b2c3d4e5f6/Bearer 0a1b…`) the search goes on
    one character after each match's start, not after its end; `resolve` then keeps the
    strongest of overlapping findings."""
    found = []
    has_value = "v" in detector.pattern.groupindex
    for window_start, window_end in windows:
        cut = window_end < len(text)
        match = detector.pattern.search(text, window_start, window_end)
        while match is not None:
            begin = match.start()
            if cut and match.end() > window_end - _LOOKAHEAD:
                match = detector.pattern.match(text, begin)  # it may go on past the window
            if match is not None:
                start, end = match.span("v") if has_value else match.span()
                span = detector.refine(text[start:end])
                if span is not None:
                    found.append(Finding(detector.kind, start + span[0], start + span[1]))
            # overlapping kinds go on one character after this match's start, others after it
            after = begin + 1 if detector.where.overlap or match is None else match.end()
            match = detector.pattern.search(text, max(after, begin + 1), window_end)
    return found


def _by_needle(detectors: tuple[Detector, ...]) -> list[tuple[str, tuple[Detector, ...]]]:
    """Detectors by the lower-case strings that must be in a text for them to run."""
    table: dict[str, list[Detector]] = {}
    for detector in detectors:
        for needle in detector.where.literals or detector.where.near:
            table.setdefault(needle, []).append(detector)
    return [(needle, tuple(found)) for needle, found in table.items()]


_NEEDLES = _by_needle(DETECTORS)
_DIGIT = re.compile(r"\d")
_NUMERIC = tuple(d for d in DETECTORS if d.where.digit)  # only in a text with a digit
_OTHERS = tuple(
    d for d in DETECTORS if not (d.where.literals or d.where.near) and d not in _NUMERIC
)  # IPv6: found by its colons


def _candidates(context: _Text) -> list[Detector]:
    """The detectors that can match: those whose needle the text holds, those of numbers when
    it has a digit, and those found by their own anchors."""
    lower = context.lower
    chosen = {id(d): d for needle, ds in _NEEDLES if needle in lower for d in ds}
    if _DIGIT.search(context.text):
        chosen.update((id(d), d) for d in _NUMERIC)
    return [*chosen.values(), *_OTHERS]


def find(text: str) -> list[Finding]:
    """Non-overlapping findings in text order; of overlapping ones the stronger kind wins."""
    size = len(text)
    if size < MIN_CHARS:
        return []
    context = _Text(text)
    found: set[Finding] = set()
    for detector in _candidates(context):
        windows = [(0, size)] if detector.where.literals else context.windows(detector.where)
        if windows:
            found.update(_scan(detector, text, windows))
    return resolve(found)


def resolve(found: set[Finding]) -> list[Finding]:
    """Non-overlapping findings in text order: the stronger kind wins, then the longer."""
    if len(found) <= 1:
        return list(found)
    kept: list[Finding] = []
    taken: list[tuple[int, int]] = []
    for finding in sorted(found, key=lambda f: (PRIORITY[f.kind], -len(f), f.start)):
        if all(finding.end <= start or finding.start >= end for start, end in taken):
            kept.append(finding)
            taken.append((finding.start, finding.end))
    return sorted(kept, key=lambda f: f.start)


SEPARATOR = "\x00"  # no pattern matches across it, and to every lookaround it is a text's edge


def find_each(texts: list[str]) -> list[list[Finding]]:
    """`find` of each text, from one search over them all joined by SEPARATOR: a record's
    twenty-odd strings cost one pass per kind instead of twenty."""
    if any(SEPARATOR in text for text in texts):  # cannot be joined safely: one by one
        return [find(text) for text in texts]
    starts, at = [], 0
    for text in texts:
        starts.append(at)
        at += len(text) + 1
    found: list[list[Finding]] = [[] for _ in texts]
    for finding in find(SEPARATOR.join(texts)):
        index = bisect_right(starts, finding.start) - 1
        offset = starts[index]
        found[index].append(Finding(finding.kind, finding.start - offset, finding.end - offset))
    return found
