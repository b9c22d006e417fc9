"""Options more than one command takes. Only click is imported here: ``--help`` loads this module."""

from __future__ import annotations

from typing import Any

import click

# The API server's fieldValidation values (functions.tooling.validation.admission.FieldValidation); listed here so
# that --help does not load the validators.
FIELD_VALIDATIONS = ("Strict", "Warn", "Ignore")
# What -o/--output prints objects as, as kubectl's -o does.
OBJECT_FORMATS = ("yaml", "json")

field_validation_option = click.option(
    "--field-validation",
    type=click.Choice(FIELD_VALIDATIONS),
    default="Strict",
    show_default=True,
    help="Unknown fields: an error (Strict, as kubectl apply), or pruned with a warning (Warn) or silently (Ignore).",
)


class OutputFormat(click.Choice):
    """``-o/--output``'s formats; a value that is none of them (a file name: ``-o`` once named a file) is refused
    with ``hint``, the flag that takes a file now."""

    def __init__(self, formats: tuple[str, ...], hint: str) -> None:
        super().__init__(formats)
        self.hint = hint

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as err:
            if not self.hint:
                raise
            message = f"{err.message.rstrip('.')}. -o is the output format now, as kubectl's; {self.hint}."
            raise click.BadParameter(message, ctx, param) from None


def output_option(formats: tuple[str, ...] = OBJECT_FORMATS, *, hint: str = "", help: str = "") -> Any:
    """``-o/--output FORMAT``: the first of ``formats`` is the default; ``hint`` says which flag takes a file."""
    return click.option(
        "-o",
        "--output",
        "output_format",
        type=OutputFormat(formats, hint),
        default=formats[0],
        show_default=True,
        help=help or "Print the objects as YAML documents, or as JSON (kubectl's List for several objects).",
    )
