from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

# Lets test modules import the shared helper modules beside them (tooling, server, corpus, ...).
sys.path.insert(0, str(Path(__file__).parent))

from functions.cli.manifests import load_documents
from server import REPO, serving
from tooling import require_crank


@pytest.fixture(scope="session")
def functions_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """examples/functions.yaml pointed at a `function-dynamo serve --insecure` started for the session."""
    require_crank()
    with serving("--insecure") as address:
        (fn,) = load_documents(REPO / "examples" / "functions.yaml")
        fn["metadata"]["annotations"]["render.crossplane.io/runtime-development-target"] = address
        path = tmp_path_factory.mktemp("fn") / "functions.yaml"
        path.write_text(yaml.safe_dump(fn))
        yield path
