"""``function-dynamo validate``: manifests checked as the cluster would check them, without a cluster."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import click

from functions.tooling.manifests import ManifestError
from functions.tooling.options import field_validation_option


@click.command(name="validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--old", type=click.Path(exists=True, path_type=Path), help="The previous version (checks an update).")
@click.option(
    "--operator-config",
    "--platform",  # its earlier name
    "operator_config",
    type=click.Path(exists=True, path_type=Path),
    help="The operator configuration: the dynamo-platform EnvironmentConfig the steps read.",
)
@field_validation_option
@click.option("-v", "--verbose", is_flag=True, help="Also list valid documents and notes.")
def validate_cmd(
    files: tuple[Path, ...], old: Path | None, operator_config: Path | None, field_validation: str, verbose: bool
) -> None:
    """Check FILES (claims or XRs, files or directories) as the cluster would: schema, CEL, function rules.

    Prints every violation with its field path and rule; exits 1 if there is any.
    """
    from functions.tooling.offline_validation import validate_files  # the validators load only when used

    try:
        reports, skipped = validate_files(
            list(files),
            old,
            operator_config,
            field_validation,
            progress=_progress(),  # type: ignore[arg-type]
        )
    except ManifestError as err:
        click.echo(f"function-dynamo validate: {err}", err=True)
        sys.exit(2)
    bad = [r for r in reports if not r.ok]
    for report in reports:
        if report.ok and not report.warnings and not verbose:
            continue
        click.echo(f"{'FAIL' if not report.ok else 'ok  '} {report.where}")
        for line in report.warnings:
            click.echo(f"  Warning: {line}")
        for line in report.violations:
            click.echo(f"  {line}")
        for line in report.notes if verbose else []:
            click.echo(f"  note: {line}")
    click.echo(f"{len(reports) - len(bad)} valid, {len(bad)} invalid, {skipped} other documents skipped")
    if bad or not reports:
        sys.exit(1)


def _progress() -> Callable[[int, int], None] | None:
    """A progress line on stderr, where a person watches it (a terminal), every second or so."""
    if not sys.stderr.isatty():
        return None
    last = [time.monotonic()]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 1.0 or done == total:
            last[0] = now
            click.echo(f"\rvalidate: {done}/{total} files", err=True, nl=done == total)

    return report
