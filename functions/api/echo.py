"""Input echoed in a message: only in part when long, and with invisible characters made visible.

A message that repeats what it refuses must stay readable whatever it was given: a 50 MB name or a value
carrying a right-to-left mark must neither flood a terminal or a CI log nor reorder the text around it.
"""

from __future__ import annotations

import re
import unicodedata

SHOWN_CHARS = 60  # what is kept of a long value: its first 60 characters, then "… (N characters)"
# A run of this many characters without a space in a message is an echoed value (a name, a key, a path through
# long keys); rules and regular expressions the messages quote are shorter.
LONG_RUN = 200
MAX_MESSAGE_CHARS = 1000  # a longer message line is cut after this many characters
_LONG_RUN = re.compile(rf"\S{{{LONG_RUN + 1},}}")
# Control and format characters (bidirectional marks and overrides, zero-width ones), line and paragraph
# separators: written as \uXXXX.
_INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp"})


def visible(text: str) -> str:
    """``text`` with every control or format character (a right-to-left mark, a zero-width space, ...) written
    as its ``\\uXXXX`` escape."""
    if text.isprintable():
        return text
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in _INVISIBLE else c for c in text)


def cut(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` whole when it is short, else its first ``limit`` characters, "…" and its length."""
    if len(text) <= limit + 20:  # cutting would save less than it adds
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``value`` (a string, or anything as ``repr`` writes it) as a message echoes it: ``cut``, and invisible
    characters escaped (``visible``)."""
    text = value if isinstance(value, str) else repr(value)
    return visible(cut(text, limit))


def clipped(message: str) -> str:
    """A message line as it is printed: every run of more than ``LONG_RUN`` characters without a space (an
    echoed value) cut as ``shown`` cuts it, and the whole line cut after ``MAX_MESSAGE_CHARS``."""
    if len(message) <= LONG_RUN and message.isprintable():
        return message
    message = _LONG_RUN.sub(lambda m: shown(m.group()), message)
    if len(message) > MAX_MESSAGE_CHARS:
        message = f"{message[:MAX_MESSAGE_CHARS]}… (message of {len(message):,} characters cut)"
    return "\n".join(visible(line) for line in message.split("\n"))
