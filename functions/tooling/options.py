"""Options more than one command takes."""

from __future__ import annotations

import click

# The API server's fieldValidation values (functions.tooling.validation.admission.FieldValidation); listed here so
# that --help does not load the validators.
FIELD_VALIDATIONS = ("Strict", "Warn", "Ignore")

field_validation_option = click.option(
    "--field-validation",
    type=click.Choice(FIELD_VALIDATIONS),
    default="Strict",
    show_default=True,
    help="Unknown fields: an error (Strict, as kubectl apply), or pruned with a warning (Warn) or silently (Ignore).",
)
