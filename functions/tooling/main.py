"""Command line: ``serve`` the function, ``render`` a claim in-process, ``validate`` manifests,
regenerate ``xrds``, ``bench`` the server, ``export`` a request's generated graph. One module per
command, imported only when that command runs: ``--help`` and ``serve`` load none of the others."""

from __future__ import annotations

import importlib

import click

# command name -> "module:attribute" of its click command
COMMANDS = {
    "serve": "functions.serve:serve",
    "render": "functions.tooling.render:render_cmd",
    "validate": "functions.tooling.validate:validate_cmd",
    "xrds": "functions.tooling.xrds:xrds",
    "bench": "functions.tooling.bench:bench",
    "export": "functions.tooling.export:export",
}
# What --help lists, so that it imports no command (tests/test_layers.py checks these match the commands').
SUMMARIES = {
    "bench": "Benchmark the real server: latency, throughput and peak RSS.",
    "export": "Print the DynamoGraphDeployment a DynamoGraphDeploymentRequest generated.",
    "render": "Render a claim or XR through its Composition's pipeline, in-process.",
    "serve": "Serve every pipeline step over gRPC (the Crossplane function spec).",
    "validate": "Check manifests as the cluster would: schema, CEL, function rules.",
    "xrds": "Regenerate the XRDs from the API models.",
}
# The distributions the tooling needs beyond the runtime's (pyproject.toml's "tooling" extra).
TOOLING_ONLY = ("jsonschema", "cel_expr_python")


class LazyCommands(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, SUMMARIES[name]) for name in self.list_commands(ctx)])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, name = target.partition(":")
        try:
            return getattr(importlib.import_module(module), name)
        except ModuleNotFoundError as err:
            if err.name not in TOOLING_ONLY:
                raise
            raise click.ClickException(
                f"'{cmd_name}' needs the tooling extra ({err.name} is missing): pip install 'function-dynamo[tooling]'"
            ) from None


@click.group(cls=LazyCommands)
def cli() -> None:
    """function-dynamo: the NVIDIA Dynamo operator as Crossplane composition functions."""


if __name__ == "__main__":
    cli()
