"""Where the CLI finds the package's manifests: the XRDs, the Compositions and the claims package's XRDs.

An installed wheel carries them in ``functions/tooling/_data/``, laid out as in the checkout (copied in when the
wheel is built: ``scripts/wheel_data.py``); a checkout, or an editable install of one, has them at its root. The
wheel's copy comes first.
"""

from __future__ import annotations

from pathlib import Path

WHEEL_DATA = Path(__file__).resolve().parent / "_data"
CHECKOUT = Path(__file__).resolve().parents[2]


def data_root() -> Path:
    """The directory holding ``xrds/``, ``compositions/`` and ``package/claims/``: the wheel's copy, else the
    checkout."""
    return WHEEL_DATA if WHEEL_DATA.is_dir() else CHECKOUT


XRD_DIR = data_root() / "xrds"
CLAIMS_XRD_DIR = data_root() / "package" / "claims" / "xrds"
COMPOSITIONS_DIR = data_root() / "compositions"  # claims/ within it holds the claims package's
