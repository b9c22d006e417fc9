"""Upstream's admission-webhook rules, moved into the XRD as CEL so the API server enforces them.

Upstream checks these in its validating webhook (docs/upstream/operator.md §5.2, §5.6); a Crossplane package has no
webhook, so every rule that needs nothing but the object itself (and, for updates, its previous
version via ``oldSelf``) becomes an ``x-kubernetes-validations`` entry of the XRD. Rules that need
more (cluster lookups, other objects) are checked by the function, and so are the rules whose CEL
the API server refuses as too costly: they iterate upstream's unbounded PodSpec containers or parse
quantity strings of unbounded length (``functions.kinds.component.webhook_rules.check_costly_rules``). Each
rule has an ``id`` that the validation catalogue (tests/validation_catalogue.yaml) refers to.

The API server estimates every rule's worst-case cost from the bounds of what it iterates
(``maxItems``, ``maxProperties``, ``maxLength``); ``SCHEMA_BOUNDS`` adds the bounds the rules here
need where upstream's schema has none. Uniqueness of ``restart.strategy.order`` is the schema's
``x-kubernetes-list-type: set`` rather than a quadratic rule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from functions.xrd.kube_catalog import node_at

# Where a rule sits in the union spec schema: () is spec itself; "*" a map value; "[]" a list item.
SPEC: tuple[str, ...] = ()
SERVICE = ("services", "*")
COMPONENT = ("components", "[]")
VOLUME_MOUNT = ("services", "*", "volumeMounts", "[]")
PVC = ("pvcs", "[]")
COMPONENT_EXPERIMENTAL = ("components", "[]", "experimental")

EXECUTOR_ANNOTATION = "nvidia.com/vllm-distributed-executor-backend"


@dataclass(frozen=True)
class Rule:
    id: str
    at: tuple[str, ...]
    rule: str
    message: str
    field_path: str = ""  # the field the refusal names (CEL fieldPath, relative to ``at``); "" names ``at`` itself

    def as_validation(self) -> dict[str, str]:
        out = {"rule": self.rule, "message": self.message}
        if self.field_path:
            out["fieldPath"] = self.field_path
        return out


def _order_guard(body: str) -> str:
    return f"!has(self.restart) || !has(self.restart.strategy) || !has(self.restart.strategy.order) || ({body})"


ORDER = "self.restart.strategy.order"
COMPONENT_COUNT = "(has(self.services) ? size(self.services) : (has(self.components) ? size(self.components) : 0))"
CHECKPOINT_ON = "has(self.checkpoint) && self.checkpoint.enabled"
WITH_FAILOVER = "Snapshot with active/passive failover is temporarily unsupported"
WITH_INTERPOD_GMS = "Snapshot with gpuMemoryService.mode=InterPod is unsupported"
KNOWN_NAME = (
    "(has(self.services) ? n in self.services : (has(self.components) && self.components.exists(c, c.name == n)))"
)


def _inter_pod(component: str, block: str, *, v1alpha1: bool) -> str:
    """CEL: the service or component ``component`` has ``block`` (gpuMemoryService, failover) in inter-pod mode
    (v1alpha1: ``block.enabled`` and ``interPod``; v1beta1: ``experimental.block`` and ``InterPod``)."""
    if v1alpha1:
        node = f"{component}.{block}"
        return f"(has({node}) && {node}.enabled && {node}.mode == 'interPod')"
    node = f"{component}.experimental.{block}"
    return f"(has({component}.experimental) && has({node}) && {node}.mode == 'InterPod')"


def _same_inter_pod(new: str, old: str, *, v1alpha1: bool) -> str:
    """Both have, or both lack, an inter-pod GPU memory service and an inter-pod failover, with the same
    numShadows when both have that failover."""
    gms = [_inter_pod(x, "gpuMemoryService", v1alpha1=v1alpha1) for x in (new, old)]
    failover = [_inter_pod(x, "failover", v1alpha1=v1alpha1) for x in (new, old)]
    path = "failover" if v1alpha1 else "experimental.failover"
    shadows = f"(!{failover[0]} || !{failover[1]} || {new}.{path}.numShadows == {old}.{path}.numShadows)"
    return f"{gms[0]} == {gms[1]} && {failover[0]} == {failover[1]} && {shadows}"


INTER_POD_IMMUTABLE = (
    "an inter-pod gpuMemoryService or failover cannot be toggled after creation, nor its numShadows changed; "
    "delete and recreate the DynamoGraphDeployment"
)


def _same(old: str, new: str) -> str:
    """Both absent, or both present and equal."""
    return f"has({new}) == has({old}) && (!has({new}) || {new} == {old})"


RULES: tuple[Rule, ...] = (
    # --- create and update (docs/upstream/operator.md §5.2 / §5.6) -----------------------------------------------
    Rule("services-non-empty", SPEC, "!has(self.services) || size(self.services) > 0",
         "spec.services must not be empty"),
    Rule("components-non-empty", SPEC, "!has(self.components) || size(self.components) > 0",
         "spec.components must not be empty"),
    Rule("restart-order-parallel", SPEC,
         _order_guard("!has(self.restart.strategy.type) || self.restart.strategy.type != 'Parallel'"),
         "spec.restart.strategy.order must not be set with the Parallel strategy"),
    Rule("restart-order-complete", SPEC, _order_guard(f"size({ORDER}) == {COMPONENT_COUNT}"),
         "spec.restart.strategy.order must list every component exactly once"),
    Rule("restart-order-known", SPEC, _order_guard(f"{ORDER}.all(n, {KNOWN_NAME})"),
         "spec.restart.strategy.order names a component that does not exist"),
    Rule("topology-spec-required", SPEC,
         "has(self.topologyConstraint) || "
         "(has(self.services) ? self.services.all(k, !has(self.services[k].topologyConstraint)) : true) && "
         "(has(self.components) ? self.components.all(c, !has(c.topologyConstraint)) : true)",
         "spec.topologyConstraint is required when a component sets a topologyConstraint"),
    Rule("topology-services-need-domain", SPEC,
         "!has(self.services) || !has(self.topologyConstraint) || has(self.topologyConstraint.packDomain) || "
         "self.services.all(k, has(self.services[k].topologyConstraint))",
         "spec.topologyConstraint.packDomain is required unless every service sets its own topologyConstraint"),
    Rule("topology-components-need-domain", SPEC,
         "!has(self.components) || !has(self.topologyConstraint) || has(self.topologyConstraint.packDomain) || "
         "self.components.exists(c, has(c.topologyConstraint))",
         "spec.topologyConstraint.packDomain is required when no component sets a topologyConstraint"),
    Rule("ingress-host", SERVICE,
         "!has(self.ingress) || !has(self.ingress.enabled) || !self.ingress.enabled || "
         "(has(self.ingress.host) && self.ingress.host != '')",
         "ingress.host is required when ingress is enabled"),
    Rule("service-executor-annotation", SERVICE,
         f"!has(self.annotations) || !('{EXECUTOR_ANNOTATION}' in self.annotations) || "
         f"self.annotations['{EXECUTOR_ANNOTATION}'].lowerAscii() in ['mp', 'ray']",
         f"annotation {EXECUTOR_ANNOTATION} must be mp or ray"),
    Rule("epp-service-single-node", SERVICE,
         "!has(self.componentType) || self.componentType != 'epp' || !has(self.multinode)",
         "an epp component cannot be multinode"),
    Rule("epp-service-one-replica", SERVICE,
         "!has(self.componentType) || self.componentType != 'epp' || !has(self.replicas) || self.replicas == 1",
         "an epp component runs exactly one replica"),
    Rule("epp-service-config", SERVICE,
         "!has(self.componentType) || self.componentType != 'epp' || "
         "(has(self.eppConfig) && has(self.eppConfig.configMapRef) != has(self.eppConfig.config))",
         "an epp component needs eppConfig with exactly one of configMapRef or config", ".eppConfig"),
    Rule("epp-config-map-name", SERVICE,
         "!has(self.eppConfig) || !has(self.eppConfig.configMapRef) || self.eppConfig.configMapRef.name != ''",
         "eppConfig.configMapRef.name is required"),
    # Upstream's webhook refuses these with the checkpoint gate on, and any enabled checkpoint with it off.
    Rule("checkpoint-with-failover-service", SERVICE,
         f"!({CHECKPOINT_ON}) || !has(self.failover) || !self.failover.enabled", WITH_FAILOVER),
    Rule("checkpoint-with-interpod-gms-service", SERVICE,
         f"!({CHECKPOINT_ON}) || !has(self.gpuMemoryService) || !self.gpuMemoryService.enabled || "
         "self.gpuMemoryService.mode != 'interPod'", WITH_INTERPOD_GMS),
    Rule("checkpoint-with-failover-component", COMPONENT_EXPERIMENTAL,
         f"!({CHECKPOINT_ON}) || !has(self.failover)", WITH_FAILOVER),
    Rule("checkpoint-with-interpod-gms-component", COMPONENT_EXPERIMENTAL,
         f"!({CHECKPOINT_ON}) || !has(self.gpuMemoryService) || self.gpuMemoryService.mode != 'InterPod'",
         WITH_INTERPOD_GMS),
    Rule("volume-mount-point", VOLUME_MOUNT,
         "self.useAsCompilationCache || (has(self.mountPoint) && size(self.mountPoint) != 0)",
         "mountPoint is required unless useAsCompilationCache is set", ".mountPoint"),
    # An empty name: upstream's conversion drops it (omitempty), then its schema requires one.
    Rule("volume-mount-name", VOLUME_MOUNT, "size(self.name) != 0", "name is required", ".name"),
    Rule("pvc-name", PVC, "size(self.name) != 0", "name is required", ".name"),
    Rule("epp-component-single-node", COMPONENT, "!has(self.type) || self.type != 'epp' || !has(self.multinode)",
         "an epp component cannot be multinode"),
    Rule("epp-component-one-replica", COMPONENT,
         "!has(self.type) || self.type != 'epp' || !has(self.replicas) || self.replicas == 1",
         "an epp component runs exactly one replica"),
    Rule("epp-component-config", COMPONENT, "!has(self.type) || self.type != 'epp' || has(self.eppConfig)",
         "an epp component needs eppConfig", ".eppConfig"),
    # --- update only: transition rules (they compare with oldSelf) --------------------------------
    Rule("backend-framework-immutable", SPEC, _same("oldSelf.backendFramework", "self.backendFramework"),
         "spec.backendFramework is immutable"),
    Rule("topology-immutable", SPEC, _same("oldSelf.topologyConstraint", "self.topologyConstraint"),
         "spec.topologyConstraint is immutable"),
    Rule("service-set-immutable", SPEC,
         "!has(self.services) || !has(oldSelf.services) || "
         "(self.services.all(k, k in oldSelf.services) && oldSelf.services.all(k, k in self.services))",
         "services cannot be added or removed after creation"),
    Rule("component-set-immutable", SPEC,
         "!has(self.components) || !has(oldSelf.components) || "
         "(self.components.all(c, oldSelf.components.exists(o, o.name == c.name)) && "
         "oldSelf.components.all(o, self.components.exists(c, c.name == o.name)))",
         "components cannot be added or removed after creation"),
    Rule("service-multinode-immutable", SPEC,
         "!has(self.services) || !has(oldSelf.services) || self.services.all(k, !(k in oldSelf.services) || "
         "has(self.services[k].multinode) == has(oldSelf.services[k].multinode))",
         "a service cannot switch between single-node and multinode"),
    Rule("component-multinode-immutable", SPEC,
         "!has(self.components) || !has(oldSelf.components) || self.components.all(c, "
         "oldSelf.components.all(o, o.name != c.name || has(o.multinode) == has(c.multinode)))",
         "a component cannot switch between single-node and multinode"),
    Rule("service-topology-immutable", SPEC,
         "!has(self.services) || !has(oldSelf.services) || self.services.all(k, !(k in oldSelf.services) || "
         "(" + _same("oldSelf.services[k].topologyConstraint", "self.services[k].topologyConstraint") + "))",
         "a service's topologyConstraint is immutable"),
    Rule("component-topology-immutable", SPEC,
         "!has(self.components) || !has(oldSelf.components) || self.components.all(c, "
         "oldSelf.components.all(o, o.name != c.name || (" + _same("o.topologyConstraint", "c.topologyConstraint")
         + ")))",
         "a component's topologyConstraint is immutable"),
    Rule("service-inter-pod-immutable", SPEC,
         "!has(self.services) || !has(oldSelf.services) || self.services.all(k, !(k in oldSelf.services) || ("
         + _same_inter_pod("self.services[k]", "oldSelf.services[k]", v1alpha1=True) + "))",
         INTER_POD_IMMUTABLE),
    Rule("component-inter-pod-immutable", SPEC,
         "!has(self.components) || !has(oldSelf.components) || self.components.all(c, "
         "oldSelf.components.all(o, o.name != c.name || (" + _same_inter_pod("c", "o", v1alpha1=False) + ")))",
         INTER_POD_IMMUTABLE),
    Rule("kv-transfer-policy-immutable", SPEC,
         "(has(self.experimental) && has(self.experimental.kvTransferPolicy)) == "
         "(has(oldSelf.experimental) && has(oldSelf.experimental.kvTransferPolicy)) && "
         "(!has(self.experimental) || !has(self.experimental.kvTransferPolicy) || "
         "self.experimental.kvTransferPolicy == oldSelf.experimental.kvTransferPolicy)",
         "spec.experimental.kvTransferPolicy is immutable"),
)  # fmt: skip


# Bounds (and list types) added to upstream's schema so the rules above fit the CEL cost budget. Each
# admits everything a valid graph can hold: at most 25 components (upstream's own maxItems and
# maxProperties), names of at most 63 characters (DNS labels, as every component name becomes one).
MAX_COMPONENTS = 25
MAX_NAME_LENGTH = 63
SCHEMA_BOUNDS: dict[tuple[str, ...], dict[str, Any]] = {
    ("restart", "strategy", "order"): {"maxItems": MAX_COMPONENTS, "x-kubernetes-list-type": "set"},
    ("restart", "strategy", "order", "[]"): {"maxLength": MAX_NAME_LENGTH},
}


def add_schema_bounds(spec: dict[str, Any]) -> None:
    for at, bounds in SCHEMA_BOUNDS.items():
        node_at(spec, at).update(bounds)


def add_webhook_rules(spec: dict[str, Any]) -> None:
    """Append every rule to its node of the (union) spec schema, with the bounds they need."""
    add_schema_bounds(spec)
    for rule in RULES:
        node = node_at(spec, rule.at)
        node["x-kubernetes-validations"] = [*node.get("x-kubernetes-validations", []), rule.as_validation()]


# A DCD spec is one service or component (docs/upstream/operator.md §5.3): the shared validator's per-component
# rules apply at its root, and its backendFramework is immutable as the DGD's.
DCD_RULE_PLACES: dict[tuple[str, ...], tuple[str, ...]] = {
    SERVICE: SPEC,
    COMPONENT: SPEC,
    VOLUME_MOUNT: ("volumeMounts", "[]"),
    COMPONENT_EXPERIMENTAL: ("experimental",),
}
DCD_SPEC_RULES = ("backend-framework-immutable",)


def dcd_rules() -> list[Rule]:
    """The DGD rules that apply to a DynamoComponentDeployment spec, moved to where they sit in its schema."""
    out = [replace(r, at=DCD_RULE_PLACES[r.at]) for r in RULES if r.at in DCD_RULE_PLACES]
    return [*out, *(r for r in RULES if r.id in DCD_SPEC_RULES)]


def add_dcd_webhook_rules(spec: dict[str, Any]) -> None:
    for rule in dcd_rules():
        node = node_at(spec, rule.at)
        node["x-kubernetes-validations"] = [*node.get("x-kubernetes-validations", []), rule.as_validation()]
