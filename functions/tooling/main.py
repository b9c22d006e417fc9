"""Command line: ``serve`` the function, ``render`` a claim in-process, ``validate`` manifests,
regenerate ``xrds``, ``bench`` the server, ``export`` a request's generated graph. One module per
command; this one only groups them."""

from __future__ import annotations

import click

from functions.serve import serve
from functions.tooling.bench import bench
from functions.tooling.export import export
from functions.tooling.render import render_cmd
from functions.tooling.validate import validate_cmd
from functions.tooling.xrds import xrds


@click.group()
def cli() -> None:
    """function-dynamo: the NVIDIA Dynamo operator as Crossplane composition functions."""


for command in (serve, render_cmd, validate_cmd, xrds, bench, export):
    cli.add_command(command)

if __name__ == "__main__":
    cli()
