"""String formats the API server checks in CRD schemas, and parsers shared with the CEL value mapping.

The set of formats comes from k8s.io/apiextensions-apiserver/pkg/apiserver/validation/formats.go; the
checks follow k8s.io/kube-openapi/pkg/validation/strfmt. Formats whose checker is not reproduced here
(uri, email, hostname, isbn*, creditcard, ssn, rgbcolor, bsonobjectid) and unknown formats such as
``int32``/``int64`` are accepted without checking.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import re
from collections.abc import Callable

_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_DATETIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$")
_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID3 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID4 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_UUID5 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_MAC = re.compile(
    r"^(?:[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){7}"
    r"|[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){19}|(?:[0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}"
    r"|(?:[0-9A-Fa-f]{4}\.){3}[0-9A-Fa-f]{4}|(?:[0-9A-Fa-f]{4}\.){9}[0-9A-Fa-f]{4})$"
)
_SHORT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LONG_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

# Go time.ParseDuration units, then strfmt's fallback unit spellings ("3 days", "1 wk").
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_GO_DURATION = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_FALLBACK_DURATION = re.compile(r"(\d+)\s*([A-Za-zµ]+)")
_FALLBACK_UNITS = (
    (("ns", "nano"), 1e-9),
    (("us", "µs", "micro"), 1e-6),
    (("ms", "milli"), 1e-3),
    (("s", "sec"), 1.0),
    (("m", "min"), 60.0),
    (("h", "hr", "hour"), 3600.0),
    (("d", "day"), 86400.0),
    (("w", "wk", "week"), 604800.0),
)


def parse_date(text: str) -> datetime.datetime | None:
    m = _DATE.match(text)
    if not m:
        return None
    try:
        return datetime.datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=datetime.UTC)
    except ValueError:
        return None


def parse_datetime(text: str) -> datetime.datetime | None:
    """Parse the layouts strfmt.ParseDateTime accepts (RFC 3339 with optional fraction, or local time)."""
    m = _DATETIME.match(text)
    if not m:
        return None
    year, month, day, hour, minute, second = (int(m[i]) for i in range(1, 7))
    micro = int((m[7] or ".0")[1:7].ljust(6, "0"))
    zone = m[8]
    if zone is None or zone in "Zz":
        tz = datetime.UTC
    else:
        sign = 1 if zone[0] == "+" else -1
        tz = datetime.timezone(sign * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    try:
        return datetime.datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    except ValueError:
        return None


def parse_duration(text: str) -> datetime.timedelta | None:
    """strfmt.ParseDuration: Go's time.ParseDuration, else the "<n> <unit>" fallback."""
    go = _parse_go_duration(text)
    if go is not None:
        return go
    total, matched = 0.0, False
    for number, unit in _FALLBACK_DURATION.findall(text):
        unit = unit.strip().lower()
        for variants, seconds in _FALLBACK_UNITS:
            if any(unit == v or (i == len(variants) - 1 and unit.startswith(v)) for i, v in enumerate(variants)):
                total += int(number) * seconds
                matched = True
    return datetime.timedelta(seconds=total) if matched else None


def _parse_go_duration(text: str) -> datetime.timedelta | None:
    body = text
    sign = 1.0
    if body and body[0] in "+-":
        sign = -1.0 if body[0] == "-" else 1.0
        body = body[1:]
    if body == "0":
        return datetime.timedelta(0)
    if not body:
        return None
    pos, total = 0, 0.0
    while pos < len(body):
        m = _GO_DURATION.match(body, pos)
        if not m:
            return None
        total += float(m[1]) * _GO_UNITS[m[2]]
        pos = m.end()
    return datetime.timedelta(seconds=sign * total)


def parse_base64(text: str) -> bytes | None:
    if not _BASE64.match(text):
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _is_date_time(text: str) -> bool:
    # strfmt.IsDateTime: a date, "T", then hh:mm:ss[.frac](z|+hh:mm); the zone is required.
    head, sep, tail = text.lower().partition("t")
    if not sep or parse_date(head) is None:
        return False
    m = re.match(r"^(\d{2}):(\d{2}):(\d{2})(\.\d+)?(z|[+-]\d{2}:\d{2})$", tail)
    return bool(m) and m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


def _is_ip(text: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(text).version == version
    except ValueError:
        return False


def _is_ipv4(text: str) -> bool:
    # ParseIPSloppy accepts leading zeros; IPv4-mapped IPv6 with a dot also counts.
    parts = text.split(".")
    if len(parts) == 4 and all(p.isdigit() and int(p) <= 255 for p in parts):
        return True
    return "." in text and _is_ip(text, 6)


def _is_cidr(text: str) -> bool:
    addr, sep, bits = text.partition("/")
    if not sep or not bits.isdigit():
        return False
    if _is_ipv4(addr) and addr.count(".") == 3 and ":" not in addr:
        return int(bits) <= 32
    return _is_ip(addr, 6) and int(bits) <= 128


CHECKERS: dict[str, Callable[[str], bool]] = {
    "datetime": _is_date_time,
    "date": lambda s: parse_date(s) is not None,
    "duration": lambda s: parse_duration(s) is not None,
    "byte": lambda s: parse_base64(s) is not None,
    "uuid": lambda s: bool(_UUID.match(s)),
    "uuid3": lambda s: bool(_UUID3.match(s)),
    "uuid4": lambda s: bool(_UUID4.match(s)),
    "uuid5": lambda s: bool(_UUID5.match(s)),
    "ipv4": _is_ipv4,
    "ipv6": lambda s: _is_ip(s, 6),
    "cidr": _is_cidr,
    "mac": lambda s: bool(_MAC.match(s)),
    "hexcolor": lambda s: bool(_HEXCOLOR.match(s)),
    "password": lambda s: True,
    "k8s-short-name": lambda s: len(s) <= 63 and bool(_SHORT_NAME.match(s)),
    "k8s-long-name": lambda s: len(s) <= 253 and bool(_LONG_NAME.match(s)),
}


def check_format(fmt: str, text: str) -> bool:
    """True when ``text`` satisfies ``fmt`` (or ``fmt`` is not checked). go-openapi drops "-" in names."""
    checker = CHECKERS.get(fmt) or CHECKERS.get(fmt.replace("-", ""))
    return checker is None or checker(text)
