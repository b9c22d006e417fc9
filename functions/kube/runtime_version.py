"""The Dynamo runtime version an image's tag names (docs/upstream/operator.md §5.6 rule 7).

Upstream reads the runtime version of a component (and of a DGDR's profiler) from the tag of its image: the text
after the last ``:`` that comes after the last ``/``, once a digest (``@...``) and surrounding blanks are gone.
The tag names a version when it is a semantic version, optionally led by ``v`` or ``V``: ``1.4.0``, ``v1.4.0``,
``1.4.0-rc.1``, ``1.4.0+build.5``. Placeholder tags (``my-tag``, ``latest``), a bare name or a digest alone name
none, and then upstream's webhook wants ``runtimeVersionOverride`` beside the image.
"""

from __future__ import annotations

import re

_NUMBER = r"(0|[1-9][0-9]*)"
# A pre-release identifier: a number without leading zeros, or anything alphanumeric with a letter or hyphen.
_PRERELEASE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_BUILD_ID = r"[0-9A-Za-z-]+"
TAG_VERSION = re.compile(
    rf"^[vV]?{_NUMBER}\.{_NUMBER}\.{_NUMBER}"
    rf"(?:-{_PRERELEASE_ID}(?:\.{_PRERELEASE_ID})*)?"
    rf"(?:\+{_BUILD_ID}(?:\.{_BUILD_ID})*)?$"
)


def image_tag(image: str) -> str:
    """The tag of an image reference; ``""`` when it has none (``repo/name``, ``repo/name@sha256:...``)."""
    ref = image.strip().split("@", 1)[0]
    slash, colon = ref.rfind("/"), ref.rfind(":")
    return ref[colon + 1 :] if colon > slash else ""


def image_tag_version(image: str) -> str | None:
    """``MAJOR.MINOR.PATCH`` of the version the image's tag names; None when the tag names none."""
    match = TAG_VERSION.fullmatch(image_tag(image).strip())
    return ".".join(match.group(i) for i in (1, 2, 3)) if match else None


def needs_runtime_version_override(image: str, override: str | None) -> bool:
    """Whether a component must say its runtime version: no override, and no version in its image's tag."""
    return not override and image_tag_version(image) is None
