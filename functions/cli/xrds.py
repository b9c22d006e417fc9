"""``function-dynamo xrds``: regenerate ``xrds/`` from the API models."""

from __future__ import annotations

import sys
from pathlib import Path

import click

REPO_ROOT = Path(__file__).resolve().parents[2]


@click.command()
@click.option("--out", type=click.Path(path_type=Path), default=REPO_ROOT / "xrds", show_default="xrds/")
@click.option(
    "--upstream-crds",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Upstream Dynamo CRDs (default: ../shared/upstream/crds beside the checkout).",
)
def xrds(out: Path, upstream_crds: Path | None) -> None:
    """Regenerate the XRDs from the API models."""
    from functions.api.kube_catalog import UpstreamCRDsMissing
    from functions.xrd import write_xrds

    try:
        for path in write_xrds(out, upstream_crds):
            click.echo(f"wrote {path}")
    except UpstreamCRDsMissing as err:
        click.echo(f"function-dynamo xrds: {err}", err=True)
        sys.exit(1)
