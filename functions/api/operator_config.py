"""The operator configuration: the fields of upstream's OperatorConfiguration that change rendering.

A platform team keeps it in a Crossplane ``EnvironmentConfig`` named ``dynamo-platform`` (its
``data`` holds these fields, as the operator's config file would); every step reads it as a
bootstrap required resource. Absent, or a field absent, means upstream's default.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

OPERATOR_CONFIG_NAME = "dynamo-platform"
# The version of upstream's operator at the reference commit, as its chart installs it (the chart's appVersion,
# passed to the operator as its version): the origin version new graphs get, the default profiler and operator
# image tags of a DGDR.
OPERATOR_VERSION = "1.5.0"
OPERATOR_CONFIG_REQUIREMENT = "platform"
ENVIRONMENT_CONFIG_API_VERSION = "apiextensions.crossplane.io/v1beta1"


class _Config(BaseModel):
    # The operator's config grows; fields this package does not use are accepted and ignored.
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class GroveConfig(_Config):
    enabled: bool | None = None  # None: Grove is assumed installed (the default pathway)
    terminationDelay: str = "15m"  # upstream code default (the Helm chart writes 4h)


class ToggleConfig(_Config):
    enabled: bool | None = None


class Orchestrators(_Config):
    grove: GroveConfig = Field(default_factory=GroveConfig)
    lws: ToggleConfig = Field(default_factory=ToggleConfig)
    kaiScheduler: ToggleConfig = Field(default_factory=ToggleConfig)
    volcanoScheduler: ToggleConfig = Field(default_factory=ToggleConfig)


class Infrastructure(_Config):
    natsAddress: str | None = None
    etcdAddress: str | None = None
    modelExpressURL: str | None = None
    prometheusEndpoint: str | None = None


class Discovery(_Config):
    backend: Literal["kubernetes", "etcd"] = "kubernetes"


class Ingress(_Config):
    virtualServiceGateway: str | None = None
    controllerClassName: str | None = None
    controllerTLSSecretName: str | None = None
    hostSuffix: str | None = None


class IstioMesh(_Config):
    tlsMode: Literal["DISABLE", "SIMPLE", "ISTIO_MUTUAL", "MUTUAL"] = "SIMPLE"
    insecureSkipVerify: bool = True
    clientCertificate: str | None = None
    privateKey: str | None = None
    caCertificates: str | None = None


class ServiceMesh(_Config):
    enabled: bool | None = None
    provider: Literal["istio", ""] = ""
    istio: IstioMesh = Field(default_factory=IstioMesh)


class CheckpointSeccomp(_Config):
    disabled: bool = False
    profile: str = ""  # empty: profiles/block-iouring.json


class CheckpointPVC(_Config):
    pvcName: str | None = None
    basePath: str | None = None
    create: bool = False
    size: str | None = None
    storageClassName: str | None = None
    accessMode: Literal["ReadWriteMany", "ReadWriteOnce"] = "ReadWriteMany"


class CheckpointStorage(_Config):
    type: Literal["", "pvc", "s3", "oci"] = ""
    pvc: CheckpointPVC = Field(default_factory=CheckpointPVC)


class Checkpoint(_Config):
    """Upstream's ``checkpoint`` section (docs/upstream/checkpoint-gms-dgdr-model.md §6.1). ``enabled`` is the gate;
    upstream also requires the PodSnapshot API, which a function cannot discover: enabling it here says the
    snapshot chart is installed."""

    enabled: bool = False
    seccomp: CheckpointSeccomp = Field(default_factory=CheckpointSeccomp)
    storage: CheckpointStorage = Field(default_factory=CheckpointStorage)
    cleanupImage: str = "busybox:1.36"

    @property
    def seccomp_profile(self) -> str | None:
        """The Localhost seccomp profile of checkpoint and restore pods; None when disabled."""
        if self.seccomp.disabled:
            return None
        return self.seccomp.profile or "profiles/block-iouring.json"

    def pvc_storage(self) -> tuple[str, str] | None:
        """(PVC name, base path) of the configured storage, or None; raises ``ValueError`` naming the field."""
        pvc, kind = self.storage.pvc, self.storage.type
        has_pvc_fields = any(v is not None for v in (pvc.pvcName, pvc.basePath, pvc.size, pvc.storageClassName))
        if kind in ("s3", "oci") and not has_pvc_fields:
            return None  # deprecated kinds, accepted and ignored
        if kind not in ("", "pvc"):
            raise ValueError(f"checkpoint.storage.type {kind!r} is not supported; only pvc is implemented today")
        if kind == "" and not has_pvc_fields:
            return None
        if not pvc.pvcName or not pvc.basePath:
            raise ValueError("checkpoint.storage.pvc.pvcName and .basePath are required for PVC storage")
        if not pvc.basePath.startswith("/"):
            raise ValueError(f"checkpoint.storage.pvc.basePath {pvc.basePath!r} must be an absolute path")
        base = "/" + "/".join(part for part in pvc.basePath.split("/") if part and part != ".")
        return pvc.pvcName, base


class DRA(_Config):
    """Upstream's ``dra`` section: unset means auto-detect, which a function cannot do, so unset counts as on
    (Kubernetes 1.34+ serves ``resource.k8s.io/v1``); ``false`` says the cluster has no DRA."""

    enabled: bool | None = None


class Model(_Config):
    """This package's own section: the image of the Job that loads a DynamoModel's LoRA adapter (a shell and
    curl; see functions.kinds.model.lora_job)."""

    loraJobImage: str = "curlimages/curl:8.11.1"


class MPI(_Config):
    sshSecretName: str = "mpi-run-ssh-secret"  # Helm default
    sshSecretNamespace: str | None = None


class GPU(_Config):
    discoveryEnabled: bool = True


class Namespace(_Config):
    restricted: str = ""


class DGDR(_Config):
    """A DynamoGraphDeploymentRequest's profiling Job: upstream's ``rbac.dgdrProfilingClusterRoleName``,
    ``--dgdr-default-image`` and ``--operator-image``/``--operator-image-pull-policy`` (the image whose
    ``/dgd-apply-overrides`` the Job installs for ``overrides.dgd``)."""

    profilingClusterRoleName: str | None = None
    defaultImage: str | None = None
    operatorImage: str = f"nvcr.io/nvidia/ai-dynamo/kubernetes-operator:{OPERATOR_VERSION}"
    operatorImagePullPolicy: Literal["Always", "IfNotPresent", "Never"] = "IfNotPresent"


class OperatorConfig(_Config):
    orchestrators: Orchestrators = Field(default_factory=Orchestrators)
    infrastructure: Infrastructure = Field(default_factory=Infrastructure)
    discovery: Discovery = Field(default_factory=Discovery)
    ingress: Ingress = Field(default_factory=Ingress)
    serviceMesh: ServiceMesh = Field(default_factory=ServiceMesh)
    checkpoint: Checkpoint = Field(default_factory=Checkpoint)
    dra: DRA = Field(default_factory=DRA)
    model: Model = Field(default_factory=Model)
    mpi: MPI = Field(default_factory=MPI)
    gpu: GPU = Field(default_factory=GPU)
    namespace: Namespace = Field(default_factory=Namespace)
    dgdr: DGDR = Field(default_factory=DGDR)

    @property
    def grove_enabled(self) -> bool:
        return self.orchestrators.grove.enabled is not False

    @property
    def lws_enabled(self) -> bool:
        """LeaderWorkerSet is usable only together with Volcano (upstream); unset means installed."""
        return self.orchestrators.lws.enabled is not False and self.orchestrators.volcanoScheduler.enabled is not False

    @property
    def kai_enabled(self) -> bool:
        return self.orchestrators.kaiScheduler.enabled is True


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` written over ``base``: objects merge key by key, anything else is replaced (a platform's
    ``spec.config`` over what its prerequisites imply)."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


class OperatorConfigError(ValueError):
    pass


def read_operator_config(environment_configs: list[dict[str, Any]]) -> OperatorConfig:
    """The config from the ``dynamo-platform`` EnvironmentConfig (a required resource), or defaults. A DGD placed on
    a DynamoPlatform is given that platform's ``dynamo-platform-<name>`` instead
    (``functions.kinds.platform.placement``)."""
    names = [str((env.get("metadata") or {}).get("name")) for env in environment_configs]
    for env, name in zip(environment_configs, names, strict=True):
        if name == OPERATOR_CONFIG_NAME or name.startswith(OPERATOR_CONFIG_NAME + "-"):
            try:
                return OperatorConfig.model_validate(env.get("data") or {})
            except ValidationError as exc:
                problems = "; ".join(
                    f"EnvironmentConfig/{name} data." + ".".join(str(p) for p in e["loc"]) + f": {e['msg']}"
                    for e in exc.errors(include_url=False)
                )
                raise OperatorConfigError(problems) from None
    return OperatorConfig()
