"""Command line: ``serve`` the function, ``render`` a claim in-process, ``validate`` manifests,
regenerate ``xrds``, ``bench`` the server, ``export`` a request's generated graph, ``migrate`` running graphs.
One module per command, imported only when that command runs: ``--help`` and ``serve`` load none of the others."""

from __future__ import annotations

import importlib
from pathlib import Path

import click

PACKAGE = "function-dynamo"

# command name -> "module:attribute" of its click command
COMMANDS = {
    "serve": "functions.serve:serve",
    "render": "functions.tooling.render:render_cmd",
    "validate": "functions.tooling.validate:validate_cmd",
    "xrds": "functions.tooling.xrds:xrds",
    "bench": "functions.tooling.bench:bench",
    "export": "functions.tooling.export:export",
    "migrate": "functions.tooling.migrate:migrate",
}
# What --help lists, so that it imports no command (tests/test_layers.py checks these match the commands').
SUMMARIES = {
    "bench": "Benchmark the real server: latency, throughput and peak RSS.",
    "export": "Print the DynamoGraphDeployment a DynamoGraphDeploymentRequest generated.",
    "migrate": "Move running graphs between the upstream Dynamo operator and this package, pods untouched.",
    "render": "Render a claim or XR through its Composition's pipeline, in-process.",
    "serve": "Serve every pipeline step over gRPC (the Crossplane function spec).",
    "validate": "Check manifests as the cluster would: schema, CEL, function rules.",
    "xrds": "Regenerate the XRDs from the API models.",
}
# The distributions the tooling needs beyond the runtime's (pyproject.toml's "tooling" extra).
TOOLING_ONLY = ("cel_expr_python",)


def package_version() -> str:
    """The installed package's version; a checkout that is not installed reads pyproject.toml's."""
    from importlib import metadata  # only --version pays for it

    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        import tomllib

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        return str(tomllib.loads(pyproject.read_text())["project"]["version"])


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(f"{PACKAGE} {package_version()}")
    ctx.exit()


version_option = click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the version and exit.",
)


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
@version_option
def cli() -> None:
    """function-dynamo: the NVIDIA Dynamo operator as Crossplane composition functions.

    \b
    Shell completion (click's), commands and options:
      bash  eval "$(_FUNCTION_DYNAMO_COMPLETE=bash_source function-dynamo)"      (in ~/.bashrc)
      zsh   eval "$(_FUNCTION_DYNAMO_COMPLETE=zsh_source function-dynamo)"       (in ~/.zshrc)
      fish  _FUNCTION_DYNAMO_COMPLETE=fish_source function-dynamo | source       (in config.fish)
    """


if __name__ == "__main__":
    cli(prog_name=PACKAGE)  # `python -m functions.tooling.main` reads, and completes, as the installed command
