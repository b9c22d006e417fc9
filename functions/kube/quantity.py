"""Kubernetes resource quantities, parsed exactly as ``resource.ParseQuantity`` parses them (used by the
webhook rules at run time and by the offline CEL library)."""

from __future__ import annotations

import re
from fractions import Fraction

_QUANTITY = re.compile(r"^([+-]?)(\d*)(?:\.(\d*))?([eEinumkKMGTP]*[+-]?\d*)$")
_DECIMAL_SUFFIX = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIX = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_NANO = Fraction(1, 10**9)
MAX_INT64 = 2**63 - 1
_QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def parse_quantity(text: str) -> Fraction:
    """resource.ParseQuantity: the exact value, rounded up (away from zero) to a multiple of 1n."""
    m = _QUANTITY.match(text) if text else None
    if not m:
        raise ValueError(_QUANTITY_FORMAT)
    sign, whole, frac, suffix = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    binary = suffix in _BINARY_SUFFIX
    if binary:
        base, exponent = 2, _BINARY_SUFFIX[suffix]
    elif suffix in _DECIMAL_SUFFIX:
        base, exponent = 10, _DECIMAL_SUFFIX[suffix]
    elif len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?\d+", suffix[1:]):
        base, exponent = 10, int(suffix[1:])
    else:
        raise ValueError("unable to parse quantity's suffix")
    if not whole and not frac:
        # No digits: Go's int64 fast path yields 0, its arbitrary-precision path fails to parse "".
        if (binary and exponent >= 50) or (not binary and exponent < -9):
            raise ValueError("unable to parse quantity's numeric part")
        return Fraction(0)
    magnitude = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    magnitude *= Fraction(base) ** exponent
    if magnitude and magnitude % _NANO:
        magnitude = (magnitude // _NANO + 1) * _NANO
    if binary and magnitude > MAX_INT64:
        magnitude = Fraction(MAX_INT64)
    return -magnitude if sign == "-" else magnitude
