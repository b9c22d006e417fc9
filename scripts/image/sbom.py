"""The runtime image's SBOM: an SPDX 2.3 JSON document, built and validated with spdx-tools (PyPI).

It lists what the image's root file system holds: the Debian packages mmdebstrap extracted (as
``name=version``, from the archives' file names) and every Python distribution installed in the image's
``dist-packages`` (read from its ``*.dist-info/METADATA``, so it is what is there, not what was asked for),
each with its package URL, and each pinned wheel with the sha256 ``requirements.lock`` checked it against.
The image itself is the described package, named by its digest. Everything comes from the build, and the
creation time is the build's epoch, so the same commit gives the same document.
"""

from __future__ import annotations

import urllib.parse
from datetime import UTC, datetime
from email.parser import HeaderParser
from pathlib import Path

from license_expression import get_spdx_licensing
from spdx_tools.spdx.model import (
    Actor,
    ActorType,
    Checksum,
    ChecksumAlgorithm,
    CreationInfo,
    Document,
    ExternalPackageRef,
    ExternalPackageRefCategory,
    Package,
    PackagePurpose,
    Relationship,
    RelationshipType,
    SpdxNoAssertion,
)
from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document
from spdx_tools.spdx.writer.json.json_writer import write_document_to_file

SPDX_VERSION = "SPDX-2.3"
DEBIAN_DISTRO = "debian-12"
ARCH = "amd64"
NAMESPACE_BASE = "https://github.com/function-dynamo/function-dynamo/spdx"


def normalized(name: str) -> str:
    """A Python distribution's normalized name (PEP 503), as purls and requirements.lock spell it."""
    return "-".join(name.replace("_", "-").replace(".", "-").lower().split("-"))


def python_distributions(site: Path) -> list[tuple[str, str]]:
    """(name, version) of every distribution installed under ``site``, from its METADATA."""
    found = []
    for metadata in sorted(site.glob("*.dist-info/METADATA")):
        headers = HeaderParser().parsestr(metadata.read_text(encoding="utf-8"))
        found.append((headers["Name"], headers["Version"]))
    return found


def lock_hashes(lock: Path) -> dict[str, str]:
    """Normalized name -> the sha256 ``requirements.lock`` pins its wheel to."""
    hashes = {}
    for line in lock.read_text().splitlines():
        if not line or line.startswith("#") or "--hash=sha256:" not in line:
            continue
        pin, _, digest = line.partition(" --hash=sha256:")
        hashes[normalized(pin.split("==")[0])] = digest.split()[0]
    return hashes


def _spdx_id(prefix: str, name: str) -> str:
    return f"SPDXRef-{prefix}-" + "".join(c if c.isalnum() or c in ".-" else "-" for c in name)


def _purl(kind: str, name: str, version: str, qualifiers: str = "") -> ExternalPackageRef:
    locator = f"pkg:{kind}/{name}@{urllib.parse.quote(version, safe='.+-~')}" + (f"?{qualifiers}" if qualifiers else "")
    return ExternalPackageRef(ExternalPackageRefCategory.PACKAGE_MANAGER, "purl", locator)


def image_sbom(
    image: dict[str, object], distributions: list[tuple[str, str]], hashes: dict[str, str], project: str
) -> Document:
    """The SPDX document of the image ``image`` (build.py's image.json summary)."""
    digest = str(image["digest"])
    reference = str(image["image"])
    repository, _, tag = reference.rpartition(":")
    created = datetime.fromtimestamp(int(str(image["epoch"])), tz=UTC)
    info = CreationInfo(
        spdx_version=SPDX_VERSION,
        spdx_id="SPDXRef-DOCUMENT",
        name=f"{repository.rsplit('/', 1)[-1]}-{tag}",
        document_namespace=f"{NAMESPACE_BASE}/{digest.replace(':', '-')}",
        creators=[Actor(ActorType.TOOL, "function-dynamo-scripts-image-sbom"), Actor(ActorType.TOOL, "spdx-tools")],
        created=created,
    )
    licensing = get_spdx_licensing()
    root = Package(
        spdx_id="SPDXRef-image",
        name=repository.rsplit("/", 1)[-1],
        version=tag,
        download_location=SpdxNoAssertion(),
        files_analyzed=False,
        license_declared=licensing.parse("Apache-2.0"),
        primary_package_purpose=PackagePurpose.CONTAINER,
        checksums=[Checksum(ChecksumAlgorithm.SHA256, digest.removeprefix("sha256:"))],
        external_references=[
            _purl("oci", repository.rsplit("/", 1)[-1], digest, f"repository_url={repository}&tag={tag}")
        ],
    )
    packages = [root]
    for entry in image["debianPackages"]:  # type: ignore[attr-defined]
        name, _, version = urllib.parse.unquote(str(entry)).partition("=")
        packages.append(
            Package(
                spdx_id=_spdx_id("deb", name),
                name=name,
                version=version,
                download_location=SpdxNoAssertion(),
                supplier=Actor(ActorType.ORGANIZATION, "Debian"),
                files_analyzed=False,
                external_references=[_purl("deb/debian", name, version, f"arch={ARCH}&distro={DEBIAN_DISTRO}")],
            )
        )
    for name, version in distributions:
        key = normalized(name)
        checksums = [Checksum(ChecksumAlgorithm.SHA256, hashes[key])] if key in hashes else []
        packages.append(
            Package(
                spdx_id=_spdx_id("pypi", key),
                name=name,
                version=version,
                download_location=SpdxNoAssertion(),
                files_analyzed=False,
                checksums=checksums,
                license_declared=licensing.parse("Apache-2.0") if key == project else None,
                external_references=[_purl("pypi", key, version)],
            )
        )
    relationships = [Relationship("SPDXRef-DOCUMENT", RelationshipType.DESCRIBES, "SPDXRef-image")]
    relationships += [Relationship("SPDXRef-image", RelationshipType.CONTAINS, p.spdx_id) for p in packages[1:]]
    return Document(creation_info=info, packages=packages, relationships=relationships)


def write_sbom(document: Document, path: Path) -> None:
    """Validate ``document`` (every SPDX rule) and write it as JSON; a violation stops the build."""
    problems = validate_full_spdx_document(document)
    if problems:
        raise SystemExit("the image's SBOM is not valid SPDX:\n" + "\n".join(p.validation_message for p in problems))
    write_document_to_file(document, str(path), validate=False)
