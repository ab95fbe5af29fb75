"""The checks a pattern's match must pass to be the kind it looks like: an e-mail address that
is not a file name, a card number (issuer prefix, grouping, Luhn), an IBAN (its checksum), an IP
address (`ipaddress`), a bearer token."""

from __future__ import annotations

import ipaddress
import re
from bisect import bisect_left

from stdnum import iban, luhn

_FILE_SUFFIXES = {"png", "jpg", "jpeg", "gif", "svg", "webp", "css", "js", "ico", "avif"}


def email_ok(value: str) -> bool:
    domain = re.split("@|%40", value, maxsplit=1)[-1]
    return domain.rsplit(".", 1)[-1].lower() not in _FILE_SUFFIXES


_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|3[068]|6011|64[4-9]|65|62|35)")


# How issuers print card numbers: in fours (the last group shorter), 4-6-5 (American Express)
# or 4-6-4 (Diners Club); an order number `419-1890228-6244365` passing Luhn is not one.
_CARD_GROUPS = ((4, 6, 5), (4, 6, 4))


def card_ok(value: str) -> bool:
    digits = re.sub(r"[ -]", "", value)
    if len({c for c in value if c in " -"}) > 1:
        return False  # one kind of separator per number
    sizes = tuple(map(len, re.split("[ -]", value)))
    if len(sizes) > 1 and sizes not in _CARD_GROUPS and set(sizes[:-1]) != {4}:
        return False
    return 13 <= len(digits) <= 19 and bool(_CARD_PREFIX.match(digits)) and luhn.is_valid(digits)


def token_ok(value: str) -> bool:
    """`Bearer <token>`: a token has digits or mixes cases past its first letter (a random
    `tok_TKCMqqRuhRLMo…` may hold no digit); `Basic information` and `bearer authentication`
    do neither."""
    rest = value[1:]
    return any(c.isdigit() for c in value) or (rest.lower() != rest and rest.upper() != rest)


def ipv4_ok(value: str) -> bool:
    try:
        address = ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return not address.is_unspecified


def ipv6_ok(value: str) -> bool:
    if sum(1 for group in value.split(":") if group) < 2:
        return False  # `::`, `a::` and the like are CSS and times, not addresses
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def iban_span(value: str) -> tuple[int, int] | None:
    """The longest prefix of the match, cut at a space, that passes the IBAN checksum."""
    cuts = [len(value)] + [i for i in range(len(value) - 1, 14, -1) if value[i] == " "]
    for cut in cuts:
        if iban.is_valid(value[:cut]):
            return 0, cut
    return None


_IPV6_LONGEST = 45  # `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255`


def ipv6_span(value: str) -> tuple[int, int] | None:
    """The longest address in a run of hex digits, colons and dots, cut at a colon or dot: a
    label before it (`ip:2001:db8::1`), a sentence's full stop or hex letters after it are
    not part of it. Only pieces short enough to be an address are tried, so a long run costs
    time in proportion to its length, not to its square."""
    cuts = [i for i, c in enumerate(value) if c in ":."]
    best: tuple[int, int] | None = None
    doubles = [i for i in cuts if value.startswith("::", i)]  # `::1` starts at its colons
    ends = sorted({*cuts, len(value)})
    for start in sorted({0, *doubles, *(i + 1 for i in cuts)}):
        index = bisect_left(ends, start + 2)
        while index < len(ends) and ends[index] - start <= _IPV6_LONGEST:
            end = ends[index]
            index += 1
            if end - start > (best[1] - best[0] if best else 1) and _ipv6_shaped(value[start:end]):
                best = (start, end)
    return best


def _ipv6_shaped(piece: str) -> bool:
    """Colons as an address has them (seven; six before a dotted IPv4 tail; at most eight
    with `::`), then the full check."""
    colons = piece.count(":")
    if ":::" in piece:
        return False
    if "::" in piece:
        return colons <= 8 and ipv6_ok(piece)
    return (colons == 7 or (colons == 6 and "." in piece)) and ipv6_ok(piece)
