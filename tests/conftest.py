from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

# Lets test modules import the packages beside them: harness (the real stack) and fixtures (offline helpers).
sys.path.insert(0, str(Path(__file__).parent))

from fixtures.tooling import REPO, require_crank
from functions.tooling.manifests import load_documents
from harness.apiserver import Installed, derived_crds, install_crd
from harness.controlplane import ControlPlane, start_control_plane
from harness.crossplane_core import Crossplane, start_crossplane
from harness.operator_stack import OperatorStack, start_operator
from harness.server import serving


@pytest.fixture(scope="session")
def functions_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """examples/functions.yaml pointed at a `function-dynamo serve --insecure` started for the session."""
    require_crank()
    with serving("--insecure") as address:
        (fn,) = load_documents(REPO / "examples" / "functions.yaml")
        fn["metadata"]["annotations"]["render.crossplane.io/runtime-development-target"] = address
        path = tmp_path_factory.mktemp("fn") / "functions.yaml"
        path.write_text(yaml.safe_dump(fn))
        yield path


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A real etcd + kube-apiserver + kube-controller-manager on 127.0.0.1, for the whole session."""
    cp = start_control_plane(tmp_path_factory.mktemp("control-plane"))
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def installed(control_plane: ControlPlane) -> dict[str, Installed]:
    """The CRDs Crossplane derives from our XRDs, created in the real API server (once per session)."""
    return {crd["metadata"]["name"]: install_crd(control_plane.client, crd) for crd in derived_crds()}


@pytest.fixture(scope="session")
def crossplane(control_plane: ControlPlane) -> Iterator[Crossplane]:
    """Crossplane core on the control plane, function-dynamo's packages installed (its processes stop with it)."""
    yield start_crossplane(control_plane)


@pytest.fixture(scope="session")
def upstream_operator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorStack]:
    """The upstream Dynamo operator, as its chart runs it, on a control plane of its own (its CRDs have the
    package's names), for the whole session."""
    cp = start_control_plane(tmp_path_factory.mktemp("operator-stack"), audit=False)
    try:
        yield start_operator(cp)
    finally:
        cp.stop()
