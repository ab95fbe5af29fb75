"""Find personal data and secrets in text: each kind is a fast pattern and, where the kind has
one, a real validator (Luhn and issuer prefixes for cards, the IBAN checksum, phone-number
metadata, `ipaddress`), so that long digit runs in pages are not taken for cards or phones."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import phonenumbers
from stdnum import iban, luhn

KINDS = ("EMAIL", "PHONE", "CARD", "IBAN", "IP", "API_KEY", "JWT", "TOKEN", "PASSWORD")
# When two findings overlap, the kind listed first wins (a JWT holds digit runs, a key may
# follow `token=`), then the longer one.
PRIORITY = {kind: rank for rank, kind in enumerate(
    ("PASSWORD", "JWT", "API_KEY", "TOKEN", "EMAIL", "IBAN", "CARD", "IP", "PHONE")
)}  # fmt: skip
PHONE_REGIONS = ("US", "FR")  # numbers written without a country code are read as these
_FILE_SUFFIXES = {"png", "jpg", "jpeg", "gif", "svg", "webp", "css", "js", "ico", "avif"}
_CREDENTIAL_NAMES = (
    r"access_token|refresh_token|id_token|auth_token|api_key|apikey|api-key|x-api-key|token|"
    r"secret|client_secret|private_key|sessionid|session_id"
)
_QUERY_CREDENTIALS = r"code|sig|signature|sid|session|auth|key"  # only as `?name=` / `&name=`
# a browser's version (`Chrome/120.0.0.0`) is four numbers too: not after these names
_NOT_A_VERSION = "".join(
    f"(?<!{name}/)(?<!{name} )"
    # A bare "v" is not among them: "v 11.0.0.0" is as likely an address as a version, and an
    # address left in the lake costs more than a version scrubbed ("v1.2.3.4" never matches).
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


Validator = Callable[[str], bool]


def _always(value: str) -> bool:
    return True


def _email_ok(value: str) -> bool:
    domain = re.split("@|%40", value, maxsplit=1)[-1]
    return domain.rsplit(".", 1)[-1].lower() not in _FILE_SUFFIXES


_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|3[068]|6011|64[4-9]|65|62|35)")


def _card_ok(value: str) -> bool:
    digits = re.sub(r"[ -]", "", value)
    if len({c for c in value if c in " -"}) > 1:
        return False  # one kind of separator per number
    return 13 <= len(digits) <= 19 and bool(_CARD_PREFIX.match(digits)) and luhn.is_valid(digits)


def _token_ok(value: str) -> bool:
    """`Bearer <token>`: a token has digits; `Basic information` does not."""
    return any(c.isdigit() for c in value)


def _ipv4_ok(value: str) -> bool:
    try:
        address = ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return not address.is_unspecified


def _ipv6_ok(value: str) -> bool:
    if sum(1 for group in value.split(":") if group) < 2:
        return False  # `::`, `a::` and the like are CSS and times, not addresses
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def _phone_ok(value: str) -> bool:
    return phone_e164(value) is not None


@lru_cache(maxsize=8192)
def phone_e164(value: str) -> str | None:
    """The number in E.164 form (`+14155550132`) when it is a valid phone number, else None."""
    digits = re.sub(r"\D", "", value)
    if re.fullmatch(r"\d{4}[-./]\d{2}[-./]\d{2}|\d{2}[-./]\d{2}[-./]\d{4}", value.strip()):
        return None  # a date
    international = value.startswith(("+", "00"))
    if not international and len(digits) != 10:
        return None  # national numbers here (US, FR) have ten digits
    if not 8 <= len(digits) <= 15:
        return None
    text = "+" + value[2:] if value.startswith("00") else value
    for region in (None,) if international else PHONE_REGIONS:
        try:
            number = phonenumbers.parse(text, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(number):
            return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return None


@dataclass(frozen=True, slots=True)
class Detector:
    """A pattern for one kind; group `v`, when the pattern has it, is the part replaced."""

    kind: str
    pattern: re.Pattern[str]
    valid: Validator = _always


def _d(kind: str, pattern: str, valid: Validator = _always, flags: int = 0) -> Detector:
    return Detector(kind, re.compile(pattern, flags), valid)


DETECTORS: tuple[Detector, ...] = (
    _d("JWT", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _d("API_KEY", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    _d("API_KEY", r"\bhf_[A-Za-z0-9]{30,}"),
    _d("API_KEY", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    _d("API_KEY", r"\bgh[pousr]_[A-Za-z0-9]{36,}"),
    _d("API_KEY", r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    _d(  # an AWS secret access key is 40 base64 characters: found by what names it
        "API_KEY",
        r"(?i)aws.{0,24}?(?:secret|private).{0,24}?[=:]\s*[\"']?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
    ),
    _d("TOKEN", r"(?i)\b(?:bearer|basic|token)\s+(?P<v>[A-Za-z0-9._~+/=-]{12,})", _token_ok),
    _d(
        "PASSWORD",
        rf"(?i)(?<![A-Za-z0-9-])(?:{PASSWORD_NAMES})[\"']?\s*[=:]\s*[\"']?(?P<v>[^\s&#\"'<>,;}}]{{3,}})",
    ),
    _d(
        "TOKEN",
        rf"(?i)(?<![A-Za-z0-9-])(?:{_CREDENTIAL_NAMES})[\"']?\s*[=:]\s*[\"']?(?P<v>[^\s&#\"'<>,;}}]{{12,}})",
    ),
    _d("TOKEN", rf"(?i)[?&;](?:{_QUERY_CREDENTIALS})=(?P<v>[^\s&#\"'<>]{{8,}})"),
    _d(
        "EMAIL",
        r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b",
        _email_ok,
    ),
    _d("IBAN", r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b"),
    _d("CARD", r"(?<![\w.-])\d(?:[ -]?\d){12,18}(?![\w-]|\.\d)", _card_ok),
    _d(
        "IP",
        rf"(?<![\w.:]){_NOT_A_VERSION}(?:\d{{1,3}}\.){{3}}\d{{1,3}}(?![\w]|\.\d)",
        _ipv4_ok,
    ),
    _d("IP", r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:]|\.\w)", _ipv6_ok),
    _d("IP", r"(?<=//)(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)", _ipv4_ok),  # URL hosts
    _d(
        "PHONE",
        r"(?<![\w+.-])(?:(?:\+|00)\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?"
        r"\d{1,4}(?:[ .-]?\d{2,4}){1,4}(?![\w-]|\.\d)",
        _phone_ok,
    ),
)


def _iban_findings(text: str, match: re.Match[str]) -> Finding | None:
    """The longest prefix of the match, cut at a space, that passes the IBAN checksum."""
    value = match.group(0)
    cuts = [len(value)] + [i for i in range(len(value) - 1, 14, -1) if value[i] == " "]
    for cut in cuts:
        if iban.is_valid(value[:cut]):
            return Finding("IBAN", match.start(), match.start() + cut)
    return None


def _scan(detector: Detector, text: str) -> Iterator[Finding]:
    for match in detector.pattern.finditer(text):
        if detector.kind == "IBAN":
            found = _iban_findings(text, match)
            if found is not None:
                yield found
            continue
        has_value = "v" in detector.pattern.groupindex
        start, end = match.span("v") if has_value else match.span()
        if detector.valid(text[start:end]):
            yield Finding(detector.kind, start, end)


def find(text: str, detectors: tuple[Detector, ...] = DETECTORS) -> list[Finding]:
    """Non-overlapping findings in text order; of overlapping ones the stronger kind wins."""
    found = [finding for detector in detectors for finding in _scan(detector, text)]
    found.sort(key=lambda f: (PRIORITY[f.kind], -len(f), f.start))
    kept: list[Finding] = []
    taken: list[tuple[int, int]] = []
    for finding in found:
        if all(finding.end <= start or finding.start >= end for start, end in taken):
            kept.append(finding)
            taken.append((finding.start, finding.end))
    return sorted(kept, key=lambda f: f.start)
