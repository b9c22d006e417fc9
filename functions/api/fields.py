"""Building blocks shared by every API model: the base class and schema markers.

The models are the single source of truth for the XRD schemas (see ``functions.xrd.schema``).
Kubernetes' own OpenAPI extensions have no pydantic equivalent, so they ride along as
markers in ``Annotated`` metadata or as ``json_schema_extra`` on fields and classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
TOPOLOGY_DOMAIN_PATTERN = r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"
SEMVER_CORE_PATTERN = r"^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$"

# A field-level json_schema_extra key that marks a field required in the schema even though
# the model gives it a default (the API server defaults it, so the key is always present).
SCHEMA_REQUIRED = "x-function-dynamo-required"


class DynamoModel(BaseModel):
    """Base of every Dynamo API object: unknown fields are errors, JSON names are accepted."""

    # defer_build: a model's validator is built when it is first used, not at import, so a command that renders
    # one kind does not build every kind's models (the server builds them all at start: functions/serve.py).
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


def schema_config(**extensions: Any) -> ConfigDict:
    """A model config that adds OpenAPI keywords (``x-kubernetes-*``) to the class' schema node."""
    return ConfigDict(
        extra="forbid",
        populate_by_name=True,
        defer_build=True,
        json_schema_extra={k.replace("_", "-"): v for k, v in extensions.items()},
    )


def cel(rule: str, message: str, **more: Any) -> dict[str, Any]:
    """One ``x-kubernetes-validations`` entry."""
    return {"rule": rule, "message": message, **more}


@dataclass(frozen=True)
class Kube:
    """An embedded Kubernetes type whose schema comes from the upstream CRD (see ``kube_catalog``)."""

    name: str


@dataclass(frozen=True)
class Format:
    """The OpenAPI ``format`` of an integer or string field."""

    value: str


@dataclass(frozen=True)
class IntOrString:
    """``x-kubernetes-int-or-string`` with an optional pattern for the string form."""

    pattern: str | None = None


@dataclass(frozen=True)
class PreserveUnknown:
    """``x-kubernetes-preserve-unknown-fields``: free-form content kept as written."""

    typed_object: bool = True


def _check_quantity(value: int | str) -> int | str:
    import re

    if isinstance(value, str) and not re.match(QUANTITY_PATTERN, value):
        raise ValueError(f"{value!r} is not a Kubernetes quantity")
    return value


Int32 = Annotated[int, Format("int32")]
Int64 = Annotated[int, Format("int64")]
DateTime = Annotated[str, Format("date-time")]
Quantity = Annotated[int | str, IntOrString(QUANTITY_PATTERN), AfterValidator(_check_quantity)]
FreeObject = Annotated[dict[str, Any], PreserveUnknown()]
FreeValue = Annotated[Any, PreserveUnknown(typed_object=False)]

# Embedded Kubernetes types: kept as plain dicts in the models (the API server validates them
# against the schema the XRD carries); their schemas are taken from upstream's CRD.
EnvVar = Annotated[dict[str, Any], Kube("EnvVar")]
Probe = Annotated[dict[str, Any], Kube("Probe")]
ExtraPodSpec = Annotated[dict[str, Any], Kube("ExtraPodSpec")]
PodTemplateSpec = Annotated[dict[str, Any], Kube("PodTemplateSpec")]
HPABehavior = Annotated[dict[str, Any], Kube("HorizontalPodAutoscalerBehavior")]
MetricSpec = Annotated[dict[str, Any], Kube("MetricSpec")]
