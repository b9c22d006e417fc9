"""``function-dynamo export``: the graph a DynamoGraphDeploymentRequest generated, as a manifest to commit.

With ``autoApply: false`` upstream leaves the generated DynamoGraphDeployment in the request's status; this
turns it into a plain ``nvidia.com/v1beta1`` DynamoGraphDeployment (name, namespace, labels, annotations, spec) a
team can review and commit, for GitOps to apply, instead of letting the cluster apply it. The source is the
observed request (``kubectl get dgdr NAME -o yaml``: its ``status.profilingResults.selectedConfig``), or a
request manifest with its output ConfigMap (``kubectl get configmap dgdr-output-NAME -o yaml``), rendered
exactly as the pipeline renders it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from functions.api.graph import SpecError
from functions.api.normalise import claimed_object
from functions.api.operator_config import OPERATOR_CONFIG_NAME, OperatorConfigError, read_operator_config
from functions.kinds.request.generated_graph import exported_manifest
from functions.kinds.request.request_step import generated_graph
from functions.tooling.manifests import ManifestError, as_xr, dump_yaml, load_documents
from functions.tooling.options import output_option
from functions.tooling.output import as_json

REQUEST_KINDS = ("DynamoGraphDeploymentRequest", "XDynamoGraphDeploymentRequest")


def _load(path: Path) -> list[dict[str, Any]]:
    """The file's documents; one that is not valid YAML (or gives a key twice) stops the command, saying where."""
    try:
        return load_documents(path)
    except ManifestError as err:
        raise click.ClickException(str(err)) from None


def _one(path: Path, kinds: tuple[str, ...], what: str) -> dict[str, Any]:
    docs = [d for d in _load(path) if d.get("kind") in kinds]
    if len(docs) != 1:
        raise click.UsageError(f"{path}: expected one {what}, found {len(docs)}")
    return docs[0]


def export_manifest(
    request: dict[str, Any],
    output: dict[str, Any] | None,
    config_docs: list[dict[str, Any]],
    output_format: str = "yaml",
) -> str:
    """The generated graph as YAML (with a comment naming its source) or JSON; raises ``click.ClickException`` saying
    why there is none."""
    manifest, source = generated_manifest(request, output, config_docs)
    if output_format == "json":
        return as_json([manifest])
    return f"# {source}\n" + dump_yaml(manifest, sort_keys=False, width=120)


def generated_manifest(
    request: dict[str, Any], output: dict[str, Any] | None, config_docs: list[dict[str, Any]]
) -> tuple[dict[str, Any], str]:
    """(the generated DynamoGraphDeployment, where it comes from); raises ``click.ClickException`` saying why there is
    none."""
    try:
        xr = as_xr(request)
        name = claimed_object(xr, "DynamoGraphDeploymentRequest").name
        generated, problem = generated_graph(xr, output, read_operator_config(config_docs))
    except (ManifestError, SpecError, OperatorConfigError) as err:
        raise click.ClickException(str(err)) from None
    if problem:
        raise click.ClickException(f"the profiling output holds no deployable graph: {problem}")
    if generated is None:
        if output is not None and output.get("profiler_status") == "failed":
            raise click.ClickException(f"profiling failed: {output.get('profiler_error', '')}")
        raise click.ClickException(
            f"DynamoGraphDeploymentRequest {name} has no generated graph yet (status.profilingResults.selectedConfig "
            f"is empty and no finished profiling output was given); once profiling is done pass "
            f"--output-configmap with `kubectl get configmap dgdr-output-{name} -o yaml`"
        )
    source = "its profiling output" if output is not None else "its status"
    return exported_manifest(
        generated.dgd
    ), f"The DynamoGraphDeployment that DynamoGraphDeploymentRequest {name} generated, from {source}."


@click.command(name="export")
@click.argument("request", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--output-configmap",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The request's output ConfigMap (dgdr-output-<name>), for a request without a generated graph in its status.",
)
@click.option(
    "--operator-config",
    "--platform",  # its earlier name
    "operator_config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help=f"The {OPERATOR_CONFIG_NAME} EnvironmentConfig (its dgdr.defaultImage decides the runtime version).",
)
@output_option(
    hint="write to a file with --output-file FILE",
    help="Print the DynamoGraphDeployment as YAML (after a comment naming its source) or as JSON.",
)
@click.option(
    "--output-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write it to this file, not stdout.",
)
def export(
    request: Path,
    output_configmap: Path | None,
    operator_config: Path | None,
    output_format: str,
    output_file: Path | None,
) -> None:
    """Print the DynamoGraphDeployment REQUEST (a DynamoGraphDeploymentRequest) generated, ready to commit."""
    doc = _one(request, REQUEST_KINDS, "DynamoGraphDeploymentRequest")
    data = None
    if output_configmap is not None:
        data = _one(output_configmap, ("ConfigMap",), "ConfigMap").get("data") or {}
    config_docs = _load(operator_config) if operator_config else []
    text = export_manifest(doc, data, config_docs, output_format)
    if output_file is None:
        click.echo(text, nl=False)
    else:
        output_file.write_text(text)
        click.echo(f"wrote {output_file}", err=True)
