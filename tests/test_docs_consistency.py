"""The docs say the same as the code about what they repeat, and stay docs for users.

Each check takes a doc's text and returns its problems, so the table test at the end can show that it fails on a
doc that is wrong: Grove's version (the one the README's install uses is the one the package is validated
against; a DynamoPlatform's is the chart the platform step pins), the namespaces the examples index gives, the
flags every Crossplane install block sets, the form of `REGISTRY` (what `scripts/release.sh` takes), kubectl's
version where a block waits with `--for=create`, the CHANGELOG's section for the version a release carries, the
README's length, links that leave the checkout, and choices explained by the machine the project is built on.

The DynamoPlatform guide's provider blocks are checked as far as it goes without a cluster or a registry: the
shell parses, the YAML parses and is what Crossplane's Provider CRD (and, when the provider's module is in the Go
module cache, its provider config CRD) admits, each package's version is the one the platform's objects are
validated against, and each provider config is the kind and name the platform's rendered managed resources
reference.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from fixtures.tooling import pinned_version, project_version, require_tools_file
from functions.kinds.platform.addons import PINNED_CHARTS
from functions.tooling.main import cli
from functions.tooling.validation.engine import validate_object
from harness.crossplane_core import RECOMMENDED_CORE_ARGS

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
EXAMPLES = REPO / "examples"
PLATFORM_GUIDE = REPO / "docs" / "kinds" / "platform.md"
README_MAX_LINES = 250
# Docs other engineers keep as measurements (they may explain figures by the machine they were taken on).
MEASUREMENTS = {"docs/performance-log.md", "docs/reliability.md"}
KUBECTL_FOR_CREATE = re.compile(r"kubectl`? 1\.31 or later")
ALPHA = re.compile(r"\bv?\d+\.\d+\.\d+-alpha\.[0-9A-Za-z.-]*[0-9A-Za-z]")
CROSSPLANE_CHART = re.compile(r"helm (?:upgrade --install|install) crossplane \S*crossplane\b(?:[^\n]*\\\n)*[^\n]*")
MACHINE = re.compile(
    r"reachable here|(?:module )?proxy (?:serves no|refuses)|CI's machine|this (?:build )?machine|"
    r"cannot be fetched (?:here|on)",
    re.I,
)
Problems = list[str]


def user_docs() -> dict[str, str]:
    """What a user reads: the README, docs/ and its kind guides, the examples index (not upstream's facts)."""
    paths = [README, *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "docs" / "kinds").glob("*.md"))]
    paths.append(EXAMPLES / "README.md")
    return {str(p.relative_to(REPO)): p.read_text() for p in paths}


def every_doc() -> dict[str, str]:
    """Every Markdown file of the checkout (upstream's facts, the CHANGELOG and the tests' notes too)."""
    skip = {"build", "dist", "node_modules"}
    paths = [
        p
        for p in REPO.rglob("*.md")
        if not any(part in skip or part.startswith(".") for part in p.relative_to(REPO).parts)
    ]
    return {str(p.relative_to(REPO)): p.read_text() for p in sorted(paths)}


def paragraph_of(text: str, pos: int) -> str:
    start = text.rfind("\n\n", 0, pos)
    end = text.find("\n\n", pos)
    return text[start + 1 if start >= 0 else 0 : end if end >= 0 else len(text)]


# --- the checks --------------------------------------------------------------------------------------------------


def grove_problems(name: str, text: str, tested: str, platform: str) -> Problems:
    """Every Grove version a doc names is the one the package is validated against (the README's install) or the
    chart a DynamoPlatform installs, the latter said of a platform; the README's Grove block installs the former."""
    problems = []
    for m in ALPHA.finditer(text):
        version = m.group(0)
        if "snapshot" in text[max(0, m.start() - 80) : m.start()].lower():
            continue  # the snapshot API's own alpha versions
        if version not in (tested, platform):
            problems.append(f"{name}: Grove {version} is neither {tested} (validated) nor {platform} (a platform's)")
        elif version == platform != tested and not re.search(
            r"DynamoPlatform|PINNED_CHARTS", paragraph_of(text, m.start())
        ):
            problems.append(f"{name}: Grove {version} is a DynamoPlatform's chart, said of something else")
    for m in re.finditer(r"grove-charts --version (\S+)", text):
        if m.group(1) != tested:
            problems.append(
                f"{name}: installs Grove {m.group(1)}, not {tested}, whose CRDs the package is validated against"
            )
    return problems


def namespace_problems(index: str, namespaces: dict[str, str | None]) -> Problems:
    """The examples index's statement of namespaces (`NS` for ... (`path`, ...), `NS` for every other, and the
    cluster-scoped files) is each example's metadata.namespace. ``namespaces``: relative path -> namespace, for the
    manifests a user applies (not the objects a preview reads from a cluster, in `cluster/` folders)."""
    at = index.find("names its namespace")
    statement = index[at:] if at >= 0 else ""
    if not statement:
        return ["examples/README.md: no statement of the examples' namespaces ('... names its namespace ...')"]
    statement = statement.split("\n\n", 1)[0]
    claims = re.findall(r"`([a-z0-9-]+)` for [^(]*\(([^)]*)\)", statement)
    listed = {ns: re.findall(r"`([\w./-]+)`", paths) for ns, paths in claims}
    default = re.search(r"`([a-z0-9-]+)`\s+for every other", statement)
    scoped = re.search(r"\.\s+((?:`[\w./-]+`(?:,\s+|\s+and\s+)?)+) (?:is|are) cluster-scoped", statement)
    cluster = set(re.findall(r"`([\w./-]+)`", scoped.group(1))) if scoped else set()
    problems = []
    for path, actual in sorted(namespaces.items()):
        said = None if path in cluster else default.group(1) if default else None
        for ns, paths in listed.items():
            if path not in cluster and any(path == p or (p.endswith("/") and path.startswith(p)) for p in paths):
                said = ns
        if said != actual:
            problems.append(
                f"examples/README.md says {path} is in {said or 'no namespace'}, it is in {actual or 'none'}"
            )
    return problems


def crossplane_install_problems(name: str, text: str) -> Problems:
    """Every Crossplane chart install sets the tests' flags as the README does (`--set 'args[i]=FLAG'`), and no
    doc sets the chart's `args` as a list, which would drop them."""
    want = [f"--set 'args[{i}]={arg}'" for i, arg in enumerate(RECOMMENDED_CORE_ARGS)]
    problems = [f"{name}: {m.group(0)!r} replaces the chart's args" for m in re.finditer(r"args=\{[^}]*\}", text)]
    for m in CROSSPLANE_CHART.finditer(text):
        missing = [flag for flag in want if flag not in m.group(0)]
        if missing:
            problems.append(f"{name}: a Crossplane install without {', '.join(missing)}")
    return problems


def registry_problems(name: str, text: str, suffix: str) -> Problems:
    """`REGISTRY` is what scripts/release.sh takes (a host, or a host and path, not where it pushed), and every
    package under it is at REGISTRY/<suffix>/..., as the script pushes them."""
    problems = []
    for m in re.finditer(r"^\s*REGISTRY=(\S+)", text, re.M):
        value = m.group(1)
        if not re.fullmatch(r"[a-z0-9.-]+(:\d+)?(/[a-z0-9._-]+)*", value) or value.endswith(f"/{suffix}"):
            problems.append(f"{name}: REGISTRY={value} is not a registry host (or host and path) as release.sh takes")
    for m in re.finditer(r"\$\{?REGISTRY\}?/([\w.-]+)(/?)", text):
        if m.group(1) != suffix or not m.group(2):
            problems.append(
                f"{name}: a package at $REGISTRY/{m.group(1)}/..., release.sh pushes to $REGISTRY/{suffix}/"
            )
    return problems


def kubectl_version_problems(name: str, text: str) -> Problems:
    if "--for=create" in text and not KUBECTL_FOR_CREATE.search(text):
        return [f"{name}: waits with --for=create without saying it needs kubectl 1.31 or later"]
    return []


def machine_problems(name: str, text: str) -> Problems:
    return [f"{name}: explains by the build machine: {m.group(0)!r}" for m in MACHINE.finditer(text)]


def link_problems(name: str, text: str) -> Problems:
    """No relative link leaves the checkout (../shared is beside the developers' checkout, not a user's clone)."""
    base = (REPO / name).parent
    problems = []
    for target in re.findall(r"\]\(([^)\s#]+)", text):
        if "://" in target or target.startswith("mailto:"):
            continue
        resolved = (base / target).resolve()
        if resolved != REPO and REPO not in resolved.parents:
            problems.append(f"{name}: links outside the checkout: {target}")
    return problems


def changelog_problems(changelog: str, version: str) -> Problems:
    """A section for the version, as scripts/release.sh looks for it (``## 0.2.0``, ``## [v0.2.0] - date``)."""
    if not re.search(rf"^## \[?v?{re.escape(version)}\]?(\s.*)?$", changelog, re.M):
        return [f"CHANGELOG.md has no '## {version}' section for the version a release of this checkout carries"]
    return []


def readme_length_problems(readme: str) -> Problems:
    lines = len(readme.splitlines())
    return [f"README.md is {lines} lines, more than {README_MAX_LINES}"] if lines > README_MAX_LINES else []


# --- the real docs -----------------------------------------------------------------------------------------------


def grove_versions() -> tuple[str, str]:
    tested = pinned_version("GROVE_VERSION")
    assert tested, "scripts/install-tools.sh pins no GROVE_VERSION"
    return tested, PINNED_CHARTS["grove"].version


def release_suffix() -> str:
    found = re.search(r'^prefix="\$registry/([^"]+)"', (REPO / "scripts" / "release.sh").read_text(), re.M)
    assert found, "scripts/release.sh no longer says where under REGISTRY it pushes"
    return found.group(1)


def example_namespaces() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        if "cluster" in path.relative_to(EXAMPLES).parts[:-1]:
            continue  # what a preview reads from a cluster (-e, --observed-resources), not a manifest to apply
        docs = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
        found = {(d.get("metadata") or {}).get("namespace") for d in docs}
        assert len(found) == 1, f"{path}: documents in several namespaces {found}"
        out[str(path.relative_to(EXAMPLES))] = found.pop()
    return out


PER_DOC: dict[str, Callable[[str, str], Problems]] = {
    "grove": lambda name, text: grove_problems(name, text, *grove_versions()),
    "crossplane install": crossplane_install_problems,
    "registry": lambda name, text: registry_problems(name, text, release_suffix()),
    "kubectl version": kubectl_version_problems,
    "build machine": lambda name, text: [] if name in MEASUREMENTS else machine_problems(name, text),
}


@pytest.mark.parametrize("check", sorted(PER_DOC))
def test_every_user_doc_agrees(check: str) -> None:
    problems = [p for name, text in user_docs().items() for p in PER_DOC[check](name, text)]
    assert problems == []


def test_no_doc_links_outside_the_checkout() -> None:
    assert [p for name, text in every_doc().items() for p in link_problems(name, text)] == []


def test_the_examples_index_gives_each_examples_namespace() -> None:
    assert namespace_problems((EXAMPLES / "README.md").read_text(), example_namespaces()) == []


def test_the_changelog_has_the_released_version_and_the_readme_is_short() -> None:
    assert changelog_problems((REPO / "CHANGELOG.md").read_text(), project_version()) == []
    assert readme_length_problems(README.read_text()) == []


def test_a_platform_installs_the_grove_the_package_is_validated_against() -> None:
    tested, platform = grove_versions()
    assert platform == tested, "PINNED_CHARTS' Grove differs from scripts/install-tools.sh's GROVE_VERSION"
    for doc in (README, PLATFORM_GUIDE):
        text = doc.read_text()
        assert tested in text, f"{doc.name} does not name Grove's version"
        assert re.search(r"validated\s+against", paragraph_of(text, text.index(tested))), doc.name


# --- each check fails on a doc that is wrong ---------------------------------------------------------------------

TESTED, PLATFORM = "v0.1.0-alpha.12-rc1", "v0.1.0-alpha.13"
NAMESPACES = {"dgd/a.yaml": "dynamo-demo", "dgdr/r.yaml": "dynamo", "operator-config.yaml": None}
INDEX = (
    "Each names its namespace: `dynamo` for the requests (`dgdr/`), and `dynamo-demo` for every other example.\n"
    "`operator-config.yaml` is cluster-scoped.\n"
)


@pytest.mark.parametrize(
    ("problems", "expected"),
    [
        (lambda: grove_problems("d", f"grove-charts --version {TESTED} \\", TESTED, PLATFORM), None),
        (
            lambda: grove_problems("d", "Grove `v0.1.0-alpha.11` runs the graphs", TESTED, PLATFORM),
            "alpha.11 is neither",
        ),
        (lambda: grove_problems("d", "grove-charts --version v0.1.0-alpha.11 \\", TESTED, PLATFORM), "installs Grove"),
        (lambda: grove_problems("d", f"grove-charts --version {PLATFORM} \\", TESTED, PLATFORM), "not v0.1.0-alpha.12"),
        (lambda: grove_problems("d", f"A DynamoPlatform installs Grove `{PLATFORM}`.", TESTED, PLATFORM), None),
        (lambda: grove_problems("d", f"Install Grove `{PLATFORM}` first.", TESTED, PLATFORM), "said of something"),
        (lambda: grove_problems("d", "the snapshot API (`api v0.1.0-alpha.1`)", TESTED, PLATFORM), None),
        (lambda: namespace_problems(INDEX, NAMESPACES), None),
        (lambda: namespace_problems(INDEX.replace("`dynamo` for", "`dynamo-x` for"), NAMESPACES), "dgdr/r.yaml"),
        (lambda: namespace_problems(INDEX, {**NAMESPACES, "platform/p.yaml": "platform"}), "platform/p.yaml"),
        (lambda: namespace_problems(INDEX.replace("`operator-config.yaml` is", "Nothing is"), NAMESPACES), "config"),
        (lambda: namespace_problems("every example is in `dynamo-demo`", NAMESPACES), "no statement"),
        (
            lambda: crossplane_install_problems(
                "d",
                "helm upgrade --install crossplane crossplane-stable/crossplane \\\n"
                "    --set 'args[0]=--max-concurrent-reconciles=8'",
            ),
            None,
        ),
        (
            lambda: crossplane_install_problems(
                "d", "helm upgrade --install crossplane crossplane-stable/crossplane \\\n    --namespace x"
            ),
            "without --set 'args[0]",
        ),
        (
            lambda: crossplane_install_problems("d", "(Helm: `--set 'args={--enable-signature-verification}'`)"),
            "replaces",
        ),
        (
            lambda: registry_problems(
                "d", "REGISTRY=registry.example.com\n$REGISTRY/function-dynamo/x", "function-dynamo"
            ),
            None,
        ),
        (lambda: registry_problems("d", "REGISTRY=ghcr.io/acme  # a path", "function-dynamo"), None),
        (
            lambda: registry_problems("d", "REGISTRY=registry.example.com/function-dynamo", "function-dynamo"),
            "not a registry host",
        ),
        (lambda: registry_problems("d", '"$REGISTRY/function-dynamo-configuration:$NEW"', "function-dynamo"), "pushes"),
        (lambda: kubectl_version_problems("d", "kubectl wait --for=create x"), "1.31"),
        (lambda: kubectl_version_problems("d", "with `kubectl` 1.31 or later: kubectl wait --for=create x"), None),
        (lambda: machine_problems("d", "the Go module proxy reachable here refuses v2.2.2"), "reachable here"),
        (lambda: machine_problems("d", "the chart cannot be fetched on CI's machine"), "CI's machine"),
        (lambda: machine_problems("d", "the Go module proxy serves no `provider-gcp/v2`"), "proxy serves no"),
        (lambda: machine_problems("d", "provider-gcp v2 is not supported yet"), None),
        (lambda: link_problems("docs/x.md", "the corpus ([corpus](../../shared/corpus))"), "outside the checkout"),
        (lambda: link_problems("README.md", "[corpus](../shared/corpus/)"), "outside the checkout"),
        (lambda: link_problems("docs/x.md", "[the README](../README.md#install) and [site](https://x.io/../..)"), None),
        (lambda: changelog_problems("# Changelog\n\n## Unreleased\n\n## 0.1.0\n", "0.2.0"), "'## 0.2.0'"),
        (lambda: changelog_problems("## 0.2.0\n", "0.2.0"), None),
        (lambda: changelog_problems("## [v0.2.0] - 2026-12-06\n", "0.2.0"), None),
        (lambda: changelog_problems("## 0.2.01\n", "0.2.0"), "'## 0.2.0'"),
        (lambda: readme_length_problems("line\n" * 251), "251 lines"),
        (lambda: readme_length_problems("line\n" * 250), None),
    ],
)
def test_each_check_fails_on_a_wrong_doc(problems: Callable[[], Problems], expected: str | None) -> None:
    found = problems()
    if expected is None:
        assert found == []
    else:
        assert found and any(expected in p for p in found), found


# --- the DynamoPlatform guide's provider blocks ------------------------------------------------------------------

PROVIDER_BLOCK = re.compile(r"^<!-- providers: ([\w ]+?) -->\n```sh\n(.*?)^```$", re.M | re.S)
HEREDOC = re.compile(r"kubectl apply -f - <<EOF\n(.*?)^EOF$", re.M | re.S)
CLOUDS = ("aws", "gcp", "azure")
ADDONS = {"helm.m.crossplane.io": "provider-helm", "kubernetes.m.crossplane.io": "provider-kubernetes"}
PACKAGE = re.compile(r"xpkg\.crossplane\.io/crossplane-contrib/(provider-[a-z0-9-]+):(v[\w.-]+)")


def provider_blocks() -> dict[str, str]:
    """The guide's blocks marked ``<!-- providers: NAME -->``, by name."""
    return {m.group(1): m.group(2) for m in PROVIDER_BLOCK.finditer(PLATFORM_GUIDE.read_text())}


def block_objects(block: str) -> list[dict[str, Any]]:
    return [d for m in HEREDOC.finditer(block) for d in yaml.safe_load_all(m.group(1)) if d is not None]


def rendered(cloud: str) -> list[dict[str, Any]]:
    """Everything the cloud's example platform composes, every stage at once (as `function-dynamo render`)."""
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        result = CliRunner().invoke(cli, ["render", f"examples/platform/{cloud}.yaml", "-o", "json"])
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    out = yaml.safe_load(result.stdout)
    return out["items"][1:]


def pinned_provider_version(provider: str) -> str | None:
    """The version the platform's objects are validated against (scripts/install-tools.sh), for a package name:
    provider-helm -> PROVIDER_HELM_VERSION, provider-aws-eks -> PROVIDER_AWS_VERSION."""
    family = provider.removeprefix("provider-").split("-")[0]
    return pinned_version(f"PROVIDER_{family.upper()}_VERSION")


def upjet_group(group: str) -> tuple[str, str | None, str]:
    """(family, service, the family's own group) of an Upjet provider's API group: eks.aws.m.upbound.io ->
    (aws, eks, aws.m.upbound.io); the family's own group (azure.m.upbound.io) has no service."""
    namespaced = group.endswith(".m.upbound.io")
    parts = group.removesuffix(".upbound.io").removesuffix(".m").split(".")
    family = parts[-1]
    return family, parts[0] if len(parts) > 1 else None, f"{family}{'.m' if namespaced else ''}.upbound.io"


def expected_provider_configs(objects: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(apiVersion, kind, name) of the cloud provider configs the managed resources reference: the family's group
    (eks.aws.m.upbound.io -> aws.m.upbound.io); a cluster-scoped resource's reference names a ProviderConfig."""
    out = set()
    for obj in objects:
        group, version = obj["apiVersion"].split("/")
        ref = (obj.get("spec") or {}).get("providerConfigRef")
        if group in ADDONS or not ref or not group.endswith(".upbound.io"):
            continue
        out.add((f"{upjet_group(group)[2]}/{version}", ref.get("kind", "ProviderConfig"), ref["name"]))
    return out


def provider_block_problems(cloud: str, block: str, objects: list[dict[str, Any]]) -> Problems:
    """A cloud's block installs a Provider per API group its platform composes (at the pinned version) and the
    provider configs its managed resources reference, with a Secret where they say it is."""
    problems = []
    docs = block_objects(block)
    packages = {m.group(1): m.group(2) for m in PACKAGE.finditer(block)}
    for provider, version in packages.items():
        if version != pinned_provider_version(provider):
            problems.append(f"{cloud}: {provider}:{version}, validated against {pinned_provider_version(provider)}")
    needed: dict[str, set[str]] = {}
    for obj in objects:
        group = obj["apiVersion"].split("/")[0]
        family, service, _ = upjet_group(group)
        if group.endswith(".upbound.io") and service:
            needed.setdefault(f"provider-{family}-{service}", set()).add(obj["kind"])
    for provider, kinds in sorted(needed.items()):
        if provider not in packages:
            problems.append(f"{cloud}: no {provider} for the {', '.join(sorted(kinds))} the platform composes")
    configs = {(d["apiVersion"], d["kind"], d["metadata"]["name"]) for d in docs if d["kind"] != "Provider"}
    for missing in sorted(expected_provider_configs(objects) - configs):
        problems.append(f"{cloud}: no {missing[1]} {missing[2]} ({missing[0]}) the managed resources reference")
    secrets = set(re.findall(r"-n (\S+) create secret generic (\S+) --from-file=(\w+)=", block))
    for doc in docs:
        ref = ((doc.get("spec") or {}).get("credentials") or {}).get("secretRef")
        if ref and (ref["namespace"], ref["name"], ref["key"]) not in secrets:
            problems.append(f"{cloud}: {doc['kind']} reads Secret {ref}, which the block does not create")
    return problems


def test_the_guide_has_a_block_for_the_shared_providers_and_each_cloud() -> None:
    blocks = provider_blocks()
    assert set(blocks) == {"helm and kubernetes", *CLOUDS}, sorted(blocks)
    bash = shutil.which("bash")
    assert bash
    for name, block in blocks.items():
        parsed = subprocess.run([bash, "-n"], input=block, text=True, capture_output=True, check=False)
        assert parsed.returncode == 0, f"{name}: {parsed.stderr}"
        assert block_objects(block), name


def test_the_shared_block_installs_what_every_platform_composes_for() -> None:
    block = provider_blocks()["helm and kubernetes"]
    packages = {m.group(1): m.group(2) for m in PACKAGE.finditer(block)}
    assert packages == {p: pinned_provider_version(p) for p in ADDONS.values()}
    assert all(d["kind"] == "Provider" for d in block_objects(block)), "helm and kubernetes need no config of yours"
    for cloud in CLOUDS:
        composed = {(o["apiVersion"].split("/")[0], o["kind"]) for o in rendered(cloud)}
        assert {g for g, _ in composed} >= set(ADDONS), cloud
        # the platform composes the helm and kubernetes provider configs itself, as the guide says
        assert {
            ("helm.m.crossplane.io", "ProviderConfig"),
            ("kubernetes.m.crossplane.io", "ClusterProviderConfig"),
        } <= composed


@pytest.mark.parametrize("cloud", CLOUDS)
def test_each_cloud_block_installs_its_providers_and_the_configs_its_resources_reference(cloud: str) -> None:
    assert provider_block_problems(cloud, provider_blocks()[cloud], rendered(cloud)) == []


def test_a_wrong_cloud_block_is_named() -> None:
    block, objects = provider_blocks()["aws"], rendered("aws")
    wrong = {
        "v2.4.0": block.replace("provider-aws-eks:v2.5.0", "provider-aws-eks:v2.4.0"),
        "no provider-aws-iam": re.sub(r"---\n(?:(?!---).)*?provider-aws-iam:v2\.5\.0\n", "", block, flags=re.S),
        "no ClusterProviderConfig default": block.replace("  name: default", "  name: aws"),
        "does not create": block.replace("--from-file=credentials=", "--from-file=creds="),
    }
    for expected, text in wrong.items():
        problems = provider_block_problems("aws", text, objects)
        assert len(problems) == 1 and expected in problems[0], (expected, problems)


def test_the_blocks_objects_are_what_their_crds_admit() -> None:
    crds = Path(require_tools_file("CROSSPLANE_CRDS"))
    provider_crd = yaml.safe_load((crds / "pkg.crossplane.io_providers.yaml").read_text())
    configs = []
    for name, block in provider_blocks().items():
        for doc in block_objects(block):
            if doc["kind"] == "Provider":
                assert validate_object(doc, provider_crd) == [], (name, doc)
            else:
                configs.append(doc)
    modcache = os.environ.get("GOMODCACHE") or str(Path(os.environ.get("GOPATH", Path.home() / "go")) / "pkg" / "mod")
    checked = 0
    for doc in configs:
        group = doc["apiVersion"].split("/")[0]
        family = group.split(".")[0]
        module, version = (
            pinned_version(f"PROVIDER_{family.upper()}_MODULE"),
            pinned_provider_version(f"provider-{family}"),
        )
        plural = f"{doc['kind'].lower()}s"
        crd_file = Path(modcache) / f"{module}@{version}" / "package" / "crds" / f"{group}_{plural}.yaml"
        if not crd_file.is_file():
            continue
        assert validate_object(doc, yaml.safe_load(crd_file.read_text())) == [], doc
        checked += 1
    if checked < len(configs):
        pytest.skip(f"{len(configs) - checked} provider config(s) unchecked: their modules are not in {modcache}")
