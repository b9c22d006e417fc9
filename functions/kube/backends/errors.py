"""The one error type of the backend package."""

from __future__ import annotations


class BackendError(ValueError):
    """The backend framework of a component cannot be determined or applied."""
