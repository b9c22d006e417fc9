"""The provider CRDs a DynamoPlatform will compose for, from the providers' Go modules (``scripts/install-tools.sh``),
accepted by the real API server, with the scope, versions and shape the platform relies on.

No provider controller runs here; these are the schemas every composed managed resource, ProviderConfig, Release
and Object is validated against.
"""

from __future__ import annotations

from typing import Any

import pytest

from fixtures.platform import PROVIDER_KINDS, provider_crds
from harness.apiserver import install_crd
from harness.controlplane import ControlPlane


def _storage(crd: dict[str, Any]) -> str:
    return next(v["name"] for v in crd["spec"]["versions"] if v.get("storage"))


@pytest.mark.parametrize("name", sorted(PROVIDER_KINDS))
def test_the_provider_crds_are_the_kinds_the_platform_composes(name: str) -> None:
    crds = {(c["spec"]["group"], c["spec"]["names"]["kind"]): c for c in provider_crds(name)}
    assert {key: (c["spec"]["scope"], _storage(c)) for key, c in crds.items()} == PROVIDER_KINDS[name]


@pytest.mark.parametrize("name", sorted(PROVIDER_KINDS))
def test_the_real_api_server_accepts_the_provider_crds(name: str, control_plane: ControlPlane) -> None:
    refused = [i for i in (install_crd(control_plane.client, c) for c in provider_crds(name)) if not i.accepted]
    assert not refused, refused


def _spec_properties(crd: dict[str, Any]) -> dict[str, Any]:
    version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    return version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]


def test_namespaced_managed_resources_have_crossplane_v2s_shape() -> None:
    """No deletionPolicy; providerConfigRef {kind, name}; a connection secret by name only (same namespace)."""
    for name in ("provider-aws", "provider-azure", "provider-helm", "provider-kubernetes"):
        for crd in provider_crds(name):
            if "ProviderConfig" in crd["spec"]["names"]["kind"]:
                continue
            spec = _spec_properties(crd)
            assert "deletionPolicy" not in spec, crd["metadata"]["name"]
            assert sorted(spec["providerConfigRef"]["required"]) == ["kind", "name"], crd["metadata"]["name"]
            assert set(spec["writeConnectionSecretToRef"]["properties"]) == {"name"}, crd["metadata"]["name"]


def test_provider_configs_read_a_kubeconfig_secret_by_name_namespace_and_key() -> None:
    for name in ("provider-helm", "provider-kubernetes"):
        for crd in provider_crds(name):
            if "ProviderConfig" not in crd["spec"]["names"]["kind"]:
                continue
            credentials = _spec_properties(crd)["credentials"]
            assert "Secret" in credentials["properties"]["source"]["enum"]
            assert sorted(credentials["properties"]["secretRef"]["required"]) == ["key", "name", "namespace"]
