"""The one registry of the package's composite kinds, shared by the server, the CLI and the validator.

Each kind has one folder here (``graph`` = DynamoGraphDeployment, ``component`` = DynamoComponentDeployment,
``scaling``, ``checkpoint``, ``request`` = DynamoGraphDeploymentRequest, ``model``, ``platform`` =
DynamoPlatform) holding its API models, XRD definition, renderers, status derivation and steps. A new kind adds
its folder and one ``Kind`` here. The DGD and DCD steps are ``placed``: a claim annotated with a DynamoPlatform
has its objects composed on that platform's cluster (``functions.kinds.platform.placement``).

The XRD definitions are named, not imported: generating XRDs is tooling (``functions.tooling.xrds``), and the
server must not load it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from functions.api import GROUP
from functions.api.fields import DynamoModel
from functions.api.upstream_operator import operator_managed
from functions.contract import StepRequest, StepResponse, fatal

INPUT_API_VERSION = "dynamo.fn.crossplane.io/v1beta1"

Step = Callable[[StepRequest], StepResponse]


@dataclass(frozen=True)
class Kind:
    folder: str  # functions/kinds/<folder>/
    claim_kind: str  # what users apply, as upstream names it
    referenceable_version: str
    xrd_file: str  # its file in xrds/
    xrd: str  # "module:function" building its XRD (imported by the tooling only)
    render_input: str  # the Input kind of the step that renders it (what ``validate`` runs)
    # In the default package the XR is the upstream kind, namespaced (apiextensions v2); otherwise it keeps the
    # claims shape there too (cluster-scoped X<Kind> and a namespaced claim).
    namespaced: bool = True
    scale: tuple[tuple[str, str], ...] = ()  # the scale subresource's paths, as upstream's CRD has them

    @property
    def xr_kind(self) -> str:
        return f"X{self.claim_kind}"

    @property
    def xr_api_version(self) -> str:
        return f"{GROUP}/{self.referenceable_version}"


def _kind(folder: str, claim_kind: str, version: str, xrd: str, render_input: str, **more: object) -> Kind:
    module = f"functions.kinds.{folder}.{folder}_xrd:{xrd}"
    return Kind(folder, claim_kind, version, f"{claim_kind.lower()}s.yaml", module, render_input, **more)  # type: ignore[arg-type]


ADAPTER_SCALE = (
    ("specReplicasPath", ".spec.replicas"),
    ("statusReplicasPath", ".status.replicas"),
    ("labelSelectorPath", ".status.selector"),
)


KINDS: tuple[Kind, ...] = (
    _kind("checkpoint", "DynamoCheckpoint", "v1alpha1", "dckpt_xrd", "Checkpoint"),
    _kind("component", "DynamoComponentDeployment", "v1beta1", "dcd_xrd", "ComponentDeployment"),
    _kind("graph", "DynamoGraphDeployment", "v1beta1", "dgd_xrd", "GraphDeployment"),
    _kind("request", "DynamoGraphDeploymentRequest", "v1beta1", "dgdr_xrd", "GraphDeploymentRequest"),
    _kind(
        "scaling", "DynamoGraphDeploymentScalingAdapter", "v1beta1", "dgdsa_xrd", "ScalingAdapter", scale=ADAPTER_SCALE
    ),
    _kind("model", "DynamoModel", "v1alpha1", "dm_xrd", "Model"),
    # A platform composes cluster-scoped objects (its EnvironmentConfig, GCP's clusters) and namespaced ones (the
    # `.m.` managed resources, the kubeconfig Secret) in its claim's namespace: the claims shape is what fits.
    _kind("platform", "DynamoPlatform", "v1alpha1", "dp_xrd", "Platform", namespaced=False),
)


def passthrough(req: StepRequest) -> StepResponse:
    """Step ``Noop``: changes nothing (the desired state passes through). The benchmark's floor."""
    return StepResponse()


def resolve(target: str) -> Any:
    """What a registry target ``"module:attribute"`` (a step, a kind's XRD builder) names, its module imported."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


# Input kind -> "module:function" of its step, and whether it is placed (a claim annotated with a DynamoPlatform
# has its objects composed on that platform's cluster).
STEP_TARGETS: dict[str, tuple[str, bool]] = {
    "Checkpoint": ("functions.kinds.checkpoint.checkpoint_step:dynamo_checkpoint", False),
    "ComponentDeployment": ("functions.kinds.component.component_step:component_deployment", True),
    "GraphDeployment": ("functions.kinds.graph.graph_render_step:render_graph_deployment", True),
    "GraphDeploymentRequest": ("functions.kinds.request.request_step:dynamo_graph_deployment_request", False),
    "GraphStatus": ("functions.kinds.graph.graph_status_step:graph_status", True),
    "Model": ("functions.kinds.model.model_step:dynamo_model", False),
    "Noop": ("functions.kinds:passthrough", False),
    "Platform": ("functions.kinds.platform.platform_step:dynamo_platform", False),
    "ScalingAdapter": ("functions.kinds.scaling.scaling_step:scaling_adapter", False),
}


class Steps(Mapping[str, Step]):
    """Input kind -> step, each step's module imported on its first lookup: ``render`` of a DGD loads the DGD's
    steps (and the kinds they compose), not the request's, the model's or the platform's. The server loads every
    step before its first request (``build_models``)."""

    def __init__(self, targets: dict[str, tuple[str, bool]]) -> None:
        self._targets = targets
        self._loaded: dict[str, Step] = {}

    def __getitem__(self, name: str) -> Step:
        step = self._loaded.get(name)
        if step is None:
            target, is_placed = self._targets[name]
            step = resolve(target)
            if is_placed:
                from functions.kinds.platform.placement import placed

                step = placed(step)
            self._loaded[name] = step
        return step

    def __iter__(self) -> Iterator[str]:
        return iter(self._targets)

    def __len__(self) -> int:
        return len(self._targets)

    def load_all(self) -> None:
        for name in self._targets:
            self[name]


STEPS = Steps(STEP_TARGETS)


def step_for_input(input_obj: dict) -> Step | None:
    if input_obj.get("apiVersion") != INPUT_API_VERSION:
        return None
    return STEPS.get(input_obj.get("kind", ""))


def run_step(step: Step, req: StepRequest) -> StepResponse:
    """``step`` on ``req``, unless the upstream operator still manages the XR (``functions.api.upstream_operator``)."""
    refusal = operator_managed(req.observed_composite)
    return fatal(refusal, reason="ManagedByUpstreamOperator") if refusal else step(req)


def kind_of(manifest_kind: str) -> Kind | None:
    """The kind a claim or an XR (``X`` + claim kind) belongs to."""
    return next((k for k in KINDS if manifest_kind in (k.claim_kind, k.xr_kind)), None)


def render_step(kind: Kind) -> Step:
    """The step that renders ``kind`` on the cluster it is applied to (not placed): what ``validate`` runs."""
    step = STEPS[kind.render_input]
    return getattr(step, "__wrapped__", step)


def build_models() -> None:
    """Build every API model's validator now. They are built on first use (``functions/api/fields.py``), which
    spares a command that renders one kind the others; the server builds them all before its first request.
    Every step is loaded first, so that every kind's models exist."""
    STEPS.load_all()
    pending: list[type[DynamoModel]] = [DynamoModel]
    while pending:
        model = pending.pop()
        pending += model.__subclasses__()
        model.model_rebuild()
