"""``function-dynamo validate``: manifests checked as the cluster would check them, without a cluster."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from functions.api.echo import clipped
from functions.kinds import KINDS
from functions.tooling.documents import STDIN, ManifestError
from functions.tooling.hints import hints_for
from functions.tooling.options import field_validation_option, output_option

if TYPE_CHECKING:
    from functions.tooling.offline_validation import DocumentReport
    from functions.tooling.skipped import Skipped

REPORT_FORMATS = ("text", "json")


@click.command(name="validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True, path_type=Path))
@click.option("--old", type=click.Path(exists=True, path_type=Path), help="The previous version (checks an update).")
@click.option(
    "--operator-config",
    "--platform",  # its earlier name
    "operator_config",
    type=click.Path(exists=True, path_type=Path),
    help="The operator configuration: the dynamo-platform EnvironmentConfig the steps read.",
)
@field_validation_option
@click.option("-v", "--verbose", is_flag=True, help="Also list valid documents, notes and every skipped document.")
@output_option(
    REPORT_FORMATS,
    help="The report as text, or as JSON (every document, valid ones, notes and skipped documents too).",
)
def validate_cmd(
    files: tuple[Path, ...],
    old: Path | None,
    operator_config: Path | None,
    field_validation: str,
    verbose: bool,
    output_format: str,
) -> None:
    """Check FILES (claims or XRs: files, directories of .yaml, .yml and .json files, or - for standard input)
    as the cluster would: schema, CEL, function rules.

    Prints every violation with its field path and rule; exits 1 if there is any, or if no document is one of
    this package's kinds. A file that is not valid YAML is reported and counted invalid, and the other files
    are checked. Every other document is skipped, saying its kind and why: one that looks like a mistake (a
    kind close to one of ours, no kind, not an object) is always listed, the others with -v. Exits 2 when it
    cannot check at all: an --old or --operator-config it cannot read, or no CEL engine to evaluate the rules.
    """
    from functions.tooling.offline_validation import validate_files  # the validators load only when used
    from functions.tooling.validation.cel import engine_missing

    if list(files).count(STDIN) > 1:
        raise click.UsageError("standard input (-) can be read once: give - once")
    missing = engine_missing()  # no document is reported valid with its CEL rules unevaluated
    if missing:
        click.echo(f"function-dynamo validate: {missing}", err=True)
        sys.exit(2)
    try:
        reports, skipped = validate_files(
            list(files),
            old,
            operator_config,
            field_validation,
            progress=_progress(),  # type: ignore[arg-type]
        )
    except ManifestError as err:
        click.echo(clipped(f"function-dynamo validate: {err}"), err=True)
        sys.exit(2)
    if output_format == "json":
        click.echo(json.dumps(json_report(reports, skipped), indent=4, ensure_ascii=False))
    else:
        print_report(reports, skipped, verbose)
    if not reports:
        kinds = ", ".join(k.claim_kind for k in KINDS)
        nothing = f"no document is one of this package's kinds ({kinds})"
        click.echo(f"function-dynamo validate: nothing to check: {nothing}", err=True)
        sys.exit(1)
    if any(not r.ok for r in reports):
        sys.exit(1)


def print_report(reports: list[DocumentReport], skipped: list[Skipped], verbose: bool) -> None:
    """The text report: each invalid document (with -v every one) with its violations, the skipped documents that
    look like mistakes (with -v every one), then the counts."""
    bad = [r for r in reports if not r.ok]
    for report in reports:
        if report.ok and not report.warnings and not verbose:
            continue
        click.echo(clipped(f"{'FAIL' if not report.ok else 'ok  '} {report.where}"))
        for line in report.warnings:
            click.echo(clipped(f"  Warning: {line}"))
        for line in report.violations:
            click.echo(textwrap.indent(clipped(line), "  "))
        for line in _hints(report):
            click.echo(clipped(f"  hint: {line}"))
        for line in report.notes if verbose else []:
            click.echo(clipped(f"  note: {line}"))
    listed = [s for s in skipped if verbose or s.notable or not reports]
    for item in listed:
        click.echo(clipped(f"skip {item.describe()}"))
    unlisted = " (-v lists them)" if len(listed) < len(skipped) else ""
    click.echo(f"{len(reports) - len(bad)} valid, {len(bad)} invalid, {_skipped_count(len(skipped))}{unlisted}")


def _skipped_count(n: int) -> str:
    return f"{n} other document{'' if n == 1 else 's'} skipped"


def json_report(reports: list[DocumentReport], skipped: list[Skipped]) -> dict[str, Any]:
    """The report as data: every document checked, every document skipped (with why), then the counts the text
    report ends with."""
    documents = [
        {
            "file": r.file,
            "index": r.index,
            "kind": r.kind,
            "name": r.name,
            "valid": r.ok,
            "violations": [clipped(v) for v in r.violations],
            "warnings": [clipped(w) for w in r.warnings],
            "notes": [clipped(n) for n in r.notes],
            "hints": _hints(r),
        }
        for r in reports
    ]
    invalid = sum(not r.ok for r in reports)
    return {
        "documents": documents,
        "skippedDocuments": [s.as_json() for s in skipped],
        "valid": len(reports) - invalid,
        "invalid": invalid,
        "skipped": len(skipped),
    }


def _hints(report: DocumentReport) -> list[str]:
    return [line for violation in report.violations for line in hints_for(clipped(violation), "validate")]


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
