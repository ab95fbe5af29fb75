"""What personal data and secrets look like: per kind a precise pattern, a real validator where
the kind has one (`validators`: Luhn and issuer prefixes for cards, the IBAN checksum,
`ipaddress`; `phones`: phone-number metadata), and where in a text it can start (`Where`), so
that `scan.find` runs each pattern only near the few places that could hold a match."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bigaction_assets.privacy.phones import dialled, phone_ok
from bigaction_assets.privacy.validators import (
    card_ok,
    email_ok,
    iban_span,
    ipv4_ok,
    ipv6_span,
    token_ok,
)

KINDS = ("EMAIL", "PHONE", "CARD", "IBAN", "IP", "API_KEY", "JWT", "TOKEN", "PASSWORD")
# When two findings overlap, the kind listed first wins (a JWT holds digit runs, a key may
# follow `token=`), then the longer one.
PRIORITY = {kind: rank for rank, kind in enumerate(
    ("PASSWORD", "JWT", "API_KEY", "TOKEN", "EMAIL", "IBAN", "CARD", "IP", "PHONE")
)}  # fmt: skip
_CREDENTIAL_NAMES = (
    r"access_token|refresh_token|id_token|auth_token|api_key|apikey|api-key|x-api-key|token|"
    r"secret|client_secret|private_key|sessionid|session_id"
)
_QUERY_CREDENTIALS = r"code|sig|signature|sid|session|auth|key"  # only as `?name=` / `&name=`
# A browser's version in a user-agent string (`Chrome/120.0.0.0`) is four numbers too: not
# right after these names and a slash. Written with a space (`Chrome 11.0.0.0`, `v 11.0.0.0`)
# it is as likely an address as a version, and an address left in the lake costs more than a
# version scrubbed.
_NOT_A_VERSION = "".join(
    f"(?<!{name}/)"
    for name in ("Chrome", "Firefox", "Safari", "Version", "version", "Edg", "OPR", "Gecko")
)
PASSWORD_NAMES = r"password|passwd|passwort|pwd|pass|passcode|pin"


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start


# No pattern matches a NUL, so `scan.find_each` can search many texts joined by one.
# The part of a match to replace, relative to the match (or the match's group `v`), or None.
Refine = Callable[[str], tuple[int, int] | None]


def _whole(valid: Callable[[str], bool]) -> Refine:
    return lambda value: (0, len(value)) if valid(value) else None


def _any(value: str) -> tuple[int, int]:
    return 0, len(value)


@dataclass(frozen=True, slots=True)
class Where:
    """Where a kind can match. `literals`: lower-case strings one of which the text must hold
    (the pattern then runs over the whole text: it starts with one of them); `near`: windows
    of `before`/`after` characters around each occurrence of one of these lower-case strings;
    `digits`/`dots`: windows around runs of digits and separators holding at least this
    many digits and dots; `digit`: only in a text holding a digit; `back`: a `near`
    window also reaches back over what this matches, read backwards from the needle (an
    email's local part, however long), and forward over what `ahead` matches after it (its
    domain); `overlap`: matches may overlap (a credential's value can run over the next
    credential's name); `anchor`: windows
    around each match of a cheap pattern."""

    literals: tuple[str, ...] = ()
    near: tuple[str, ...] = ()
    digits: int = 0
    dots: int = 0
    digit: bool = False
    anchor: re.Pattern[str] | None = None
    back: re.Pattern[str] | None = None
    ahead: re.Pattern[str] | None = None
    overlap: bool = False
    before: int = 8
    after: int = 8


@dataclass(frozen=True, slots=True)
class Detector:
    """A pattern for one kind; group `v`, when the pattern has it, is the part replaced."""

    kind: str
    pattern: re.Pattern[str]
    where: Where
    refine: Refine = _any


def _d(kind: str, pattern: str, where: Where, refine: Refine = _any) -> Detector:
    return Detector(kind, re.compile(pattern), where, refine)


_VALUE = r"[\"']?\s{{0,16}}[=:]\s{{0,16}}[\"']?(?P<v>[^\s&#\"'<>,;}}\x00]{{{n},}})"
# Windows after a credential's name hold its shortest match (name, up to 16 blanks each side of
# `=`/`:`, the shortest value), so a longer one reaches the window's end and is matched again.
_AFTER_NAME = 96
DETECTORS: tuple[Detector, ...] = (
    _d("JWT", r"eyJ(?<!\weyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
       Where(literals=("eyj",))),
    _d("API_KEY", r"sk-(?<!\wsk-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
       Where(literals=("sk-",))),
    _d("API_KEY", r"hf_(?<!\whf_)[A-Za-z0-9]{30,}", Where(literals=("hf_",))),
    _d("API_KEY", r"(?:AKIA|ASIA)(?<!\w....)[A-Z0-9]{16}\b", Where(literals=("akia", "asia"))),
    _d("API_KEY", r"gh[pousr]_(?<!\w....)[A-Za-z0-9]{36,}", Where(literals=("gh",))),
    _d("API_KEY", r"github_pat_(?<!\wgithub_pat_)[A-Za-z0-9_]{22,}",
       Where(literals=("github_pat_",))),
    _d(  # an AWS secret access key is 40 base64 characters: found by what names it
        "API_KEY",
        r"(?i)aws[^\x00\n]{0,24}?(?:secret|private)[^\x00\n]{0,24}?[=:]\s{0,16}[\"']?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        Where(near=("aws",), after=160, overlap=True),
    ),
    _d("TOKEN", r"(?i)\b(?:bearer|basic|token)\s{1,16}(?P<v>[A-Za-z0-9_.~+/=-]{12,})",
       Where(near=("bearer", "basic", "token"), after=_AFTER_NAME, overlap=True),
       _whole(token_ok)),
    _d("PASSWORD", rf"(?i)(?<![A-Za-z0-9-])(?:{PASSWORD_NAMES}){_VALUE.format(n=3)}",
       Where(near=("pass", "pwd", "pin"), after=_AFTER_NAME, overlap=True)),
    _d("TOKEN", rf"(?i)(?<![A-Za-z0-9-])(?:{_CREDENTIAL_NAMES}){_VALUE.format(n=12)}",
       Where(near=("token", "api", "secret", "private_key", "session"), before=16, overlap=True,
             after=_AFTER_NAME)),
    _d("TOKEN", rf"(?i)[?&;](?:{_QUERY_CREDENTIALS})=(?P<v>[^\s&#\"'<>\x00]{{8,}})",
       Where(near=("code=", "sig=", "signature=", "sid=", "session=", "auth=", "key="),
             overlap=True, before=12, after=_AFTER_NAME)),
    _d(
        "EMAIL",
        r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b",
        Where(near=("@", "%40"), back=re.compile(r"[A-Za-z0-9._%+-]*"),
              ahead=re.compile(r"[A-Za-z0-9.-]*")),
        _whole(email_ok),
    ),
    _d("IBAN", r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b",
       Where(anchor=re.compile(r"[A-Z]{2}\d\d"), digit=True, before=1, after=48), iban_span),
    _d("CARD", r"(?<![\w.+-])\d(?:[ -]?\d){12,18}(?![\w-]|\.\d)", Where(digits=13, digit=True),
       _whole(card_ok)),
    _d("IP", rf"(?<![\w.]){_NOT_A_VERSION}(?:\d{{1,3}}\.){{3}}\d{{1,3}}(?![\w]|\.\d)",
       Where(digits=4, dots=3, digit=True),
       _whole(ipv4_ok)),
    _d(  # a run of hex digits, colons and dots holding two colons; `ipv6_span` cuts labels off
        "IP",
        r"(?:(?<![\w.:])|(?=:))(?=[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:)[0-9A-Fa-f:.]+(?:(?<=[.:])|(?!\w))",
        # an address has `::`, or six colons and more (`1:2:3:4:5:6:7:8`, `…:6:1.2.3.4`):
        # times (`09:34:12`) and most CSS have neither
        Where(anchor=re.compile(r"::|:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){4}:"), before=48,
              after=48),
        ipv6_span,
    ),
    _d("PHONE", r"(?i)(?<=tel:)(?<![a-z]tel:)\+?[\d(][\d().-]*\d", Where(near=("tel:",), after=32),
       _whole(dialled)),  # a `tel:` link's number, whatever its shape
    _d(
        # not one stretch of a longer run of digit groups (a hex dump, a tracking number)
        "PHONE",
        r"(?<![\w+.-])(?:(?<!\d[ .])|(?=[+(]))(?:(?:\+|00)\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?"
        r"\d{1,4}(?:[ .-]?\d{2,4}){1,4}(?![\w-]|[ .]\d)",
        Where(digits=8, digit=True),
        _whole(phone_ok),
    ),
)  # fmt: skip
