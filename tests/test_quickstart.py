"""The README's install quickstart, run as written against a real API server and a real Crossplane.

The README's blocks marked ``<!-- quickstart: run -->`` are joined, after the test's own values for the
variables of the ``settings`` block, and run by bash from the checkout with the real ``helm`` and ``kubectl``
(both built from their modules). So Crossplane is installed by its own Helm chart (served from a loopback Helm
repository: the chart of the module ``scripts/install-tools.sh`` builds from, packaged with its release
version), the release is built and pushed by ``scripts/release.sh`` to a loopback registry, the Configuration
is installed from there, and the example graph is applied and waited for until Ready.

The test plays what a cluster's nodes would do, in a thread beside the script:

- the kubelet for the chart's two Deployments (``tests/harness/kubelet_play.py``: Crossplane core and its RBAC manager
  run from the chart's pod specs, as the chart's ServiceAccounts), then reports them Available;
- the package runtime for the Function: its runtime image, out of the released ``function-dynamo.xpkg``, under
  runc with a certificate from Crossplane's root CA, and the FunctionRevision's endpoint (as in
  ``tests/harness/crossplane_core.py``);
- Grove, once the graph's PodCliqueSet exists (the ``vllm-agg-ready`` status scenario).

The block marked ``played`` (Grove's chart) is not run: its chart cannot be fetched here, and the test
installs the CRDs of the same Grove release from its API module instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fixtures.tooling import _missing, _tools_env, pinned_version, project_version
from harness.controller_play import play_grove
from harness.controlplane import (
    APIError,
    ControlPlane,
    free_port,
    require_kubectl,
    start_control_plane,
    start_process,
    wait_for,
)
from harness.crossplane_core import (
    FUNCTION,
    NAMESPACE,
    RECOMMENDED_CORE_ARGS,
    function_server_certs,
    install_target_crds,
    play_revision,
    port_open,
    require_tools,
    start_function,
    start_registry,
)
from harness.kubelet_play import play_pod, report_available

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
MARKER = re.compile(r"^<!-- quickstart: (settings|run|played)\b[^\n]*-->\n```sh\n(.*?)^```$", re.M | re.S)
SETTINGS = {"REGISTRY", "VERSION", "CROSSPLANE_CHARTS", "HF_TOKEN"}
CHART_DEPLOYMENTS = ("crossplane", "crossplane-rbac-manager")
GRAPH_NAMESPACE = "dynamo-demo"
SCRIPT_SECONDS = 1500.0
PKG = "/apis/pkg.crossplane.io/v1"


def quickstart_blocks() -> list[tuple[str, str]]:
    """The README's quickstart blocks in order: (kind, the block's text)."""
    return [(m.group(1), m.group(2)) for m in MARKER.finditer(README.read_text())]


def settings_names(block: str) -> set[str]:
    return {m.group(1) for m in re.finditer(r"^([A-Z_]+)=", block, re.M)}


def test_the_quickstart_sets_what_it_uses_and_names_the_tested_versions() -> None:
    blocks = quickstart_blocks()
    kinds = [kind for kind, _ in blocks]
    assert kinds.count("settings") == 1 and kinds.count("run") >= 4, kinds
    settings = next(text for kind, text in blocks if kind == "settings")
    assert settings_names(settings) == SETTINGS
    assert re.search(rf"^VERSION=v{re.escape(project_version())}\b", settings, re.M), (
        "the quickstart's VERSION is not pyproject.toml's"
    )
    run = "\n".join(text for kind, text in blocks if kind == "run")
    used = set(re.findall(r"\$\{?([A-Z_]+)", run))
    assert used == SETTINGS, f"the blocks use {sorted(used)}, the settings set {sorted(SETTINGS)}"
    crossplane = (pinned_version() or "").removeprefix("v")
    assert f"crossplane-stable/crossplane --version {crossplane} " in run, "the chart's version is not the tested one"
    chart_args = re.findall(r"--set 'args\[\d+\]=([^']+)'", run)
    assert chart_args == list(RECOMMENDED_CORE_ARGS), "the README installs Crossplane with other flags than the tests"
    played = "\n".join(text for kind, text in blocks if kind == "played")
    grove = pinned_version("GROVE_VERSION")
    assert grove and f"grove-charts --version {grove} " in played, "the Grove release is not the tested one"


@dataclass
class ClusterPlay:
    """What a cluster's nodes would do while the quickstart runs (see the module's doc); errors are kept."""

    cp: ControlPlane
    crossplane: Path
    crossplane_crds: Path
    release_out: Path
    stop: threading.Event = field(default_factory=threading.Event)
    errors: list[BaseException] = field(default_factory=list)
    played: set[str] = field(default_factory=set)
    function_address: str = ""

    def run(self) -> None:
        while not self.stop.is_set() and not self.errors:
            self._guarded(self.step)
            time.sleep(0.5)

    def _guarded(self, play: Any, *args: Any) -> None:
        try:
            play(*args)
        except BaseException as err:  # the test reports it
            self.errors.append(err)

    def _play_deployment(self, deployment: dict[str, Any]) -> None:
        ports = play_pod(self.cp, deployment, self.crossplane, self.crossplane_crds)
        if "readyz" in ports:  # the chart's startup probe
            name = f"{deployment['metadata']['name']}-crossplane"
            wait_for(self.cp, name, lambda: port_open(f"127.0.0.1:{ports['readyz']}"))
        report_available(self.cp, deployment)

    def _get(self, path: str) -> dict[str, Any] | None:
        try:
            return self.cp.client.get(path)
        except APIError as err:
            if err.code == 404 or err.code == 429 or err.code >= 500:  # absent, or a new CRD's storage starting
                return None
            raise

    def step(self) -> None:
        for name in CHART_DEPLOYMENTS:
            deployment = self._get(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{name}")
            if deployment is not None and name not in self.played:
                self.played.add(name)  # pods start side by side, as on nodes: the RBAC manager waits for core's CRDs
                threading.Thread(target=self._guarded, args=(self._play_deployment, deployment), daemon=True).start()
        revisions = self._get(f"{PKG}/functionrevisions?labelSelector=pkg.crossplane.io%2Fpackage%3D{FUNCTION}") or {
            "items": []
        }  # none until Crossplane's CRDs are in
        if revisions["items"] and not self.function_address:
            self.function_address = self._start_function()
        for revision in revisions["items"]:
            play_revision(self.cp, revision, self.function_address)
        if "grove" not in self.played and self._get(
            f"/apis/grove.io/v1alpha1/namespaces/{GRAPH_NAMESPACE}/podcliquesets/vllm-agg"
        ):
            play_grove(self.cp, "vllm-agg-ready", GRAPH_NAMESPACE)
            self.played.add("grove")

    def _start_function(self) -> str:
        """The released Function package's runtime image, serving with a certificate from Crossplane's root CA."""
        certs_dir = function_server_certs(self.cp)
        address = f"127.0.0.1:{free_port()}"
        start_function(self.cp, self.release_out, certs_dir, address)
        wait_for(self.cp, "function-dynamo", lambda: port_open(address))
        return address


def _chart_repository(cp: ControlPlane, helm: Path, chart: Path, version: str) -> str:
    """Crossplane's chart, packaged with its release version, served as a Helm repository on loopback."""
    repo = cp.run_dir / "chart-repo"
    repo.mkdir()
    env = {**os.environ, "HELM_CONFIG_HOME": str(cp.run_dir / "helm"), "HELM_CACHE_HOME": str(cp.run_dir / "helm")}
    subprocess.run([str(helm), "package", str(chart), "--version", version, "--app-version", f"v{version}",
                    "--destination", str(repo)], check=True, capture_output=True, env=env, timeout=120)  # fmt: skip
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    subprocess.run([str(helm), "repo", "index", str(repo), "--url", url], check=True, env=env, timeout=60)
    serve = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(repo)]
    start_process(cp, "chart-repository", serve)
    wait_for(cp, "chart-repository", lambda: port_open(f"127.0.0.1:{port}"))
    return url


@pytest.fixture(scope="module")
def bare_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A control plane of its own with nothing installed: the quickstart installs Crossplane itself."""
    cp = start_control_plane(tmp_path_factory.mktemp("quickstart-control-plane"))
    try:
        yield cp
    finally:
        cp.stop()


def test_the_readme_quickstart_installs_crossplane_and_the_package_and_serves_the_example(
    bare_cluster: ControlPlane, tmp_path: Path
) -> None:
    cp = bare_cluster
    tools = require_tools()
    env_tools = _tools_env()
    helm, chart = Path(env_tools.get("HELM", "")), Path(env_tools.get("CROSSPLANE_CHART", ""))
    if not helm.is_file() or not (chart / "Chart.yaml").is_file():
        _missing("helm or Crossplane's chart is not installed: run scripts/install-tools.sh")
    if shutil.which("mmdebstrap") is None:
        _missing("mmdebstrap builds the release's runtime image: run scripts/install-tools.sh as root")
    kubectl = require_kubectl()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "helm").symlink_to(helm)
    (bin_dir / "kubectl").symlink_to(kubectl)

    crossplane_version = (pinned_version() or "").removeprefix("v")
    charts = _chart_repository(cp, helm, chart, crossplane_version)
    registry = start_registry(cp, tools["OCI_REGISTRY"])
    install_target_crds(cp)  # the played block: Grove's CRDs (and the other APIs'), not Grove's chart
    release_out = tmp_path / "release"
    values = {"REGISTRY": registry, "VERSION": f"v{project_version()}", "CROSSPLANE_CHARTS": charts,
              "HF_TOKEN": "hf_quickstart_test"}  # fmt: skip
    blocks = quickstart_blocks()
    script = "set -euo pipefail\nset -x\n" + "".join(f"{k}={v}\n" for k, v in values.items())
    script += "\n".join(text for kind, text in blocks if kind == "run")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "KUBECONFIG": str(cp.kubeconfig),
        "HELM_CONFIG_HOME": str(tmp_path / "helm" / "config"),
        "HELM_CACHE_HOME": str(tmp_path / "helm" / "cache"),
        "HELM_DATA_HOME": str(tmp_path / "helm" / "data"),
        "RELEASE_OUT": str(release_out),
    }

    play = ClusterPlay(cp, tools["CROSSPLANE"], tools["CROSSPLANE_CRDS"], release_out)
    thread = threading.Thread(target=play.run, daemon=True)
    thread.start()
    log = tmp_path / "quickstart.log"
    try:
        with log.open("wb") as out:
            proc = subprocess.Popen(["bash", "-c", script], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)  # fmt: skip
            deadline = time.monotonic() + SCRIPT_SECONDS
            while proc.poll() is None and not play.errors and time.monotonic() < deadline:
                time.sleep(1)
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait()
    finally:
        play.stop.set()
        thread.join(timeout=30)
    output = log.read_text(errors="replace")
    assert not play.errors, f"the cluster play failed: {play.errors[0]!r}; {cp.where()}"
    assert proc.returncode == 0, f"the quickstart failed ({proc.returncode}):\n{output[-6000:]}\n{cp.where()}"

    # Crossplane came from its chart, at the tested version, and ran as the chart's ServiceAccount
    deployment = cp.client.get(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/crossplane")
    assert deployment["metadata"]["labels"]["helm.sh/chart"] == f"crossplane-{crossplane_version}"
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "crossplane"
    # the Function the Configuration resolved is the release pushed to the registry
    function = cp.client.get(f"{PKG}/functions/{FUNCTION}")
    assert function["spec"]["package"] == f"{registry}/function-dynamo/function-dynamo:{values['VERSION']}"
    # the graph is Ready, its PodCliqueSet composed and controlled by it, as the last command printed
    graph = cp.client.get(f"/apis/nvidia.com/v1beta1/namespaces/{GRAPH_NAMESPACE}/dynamographdeployments/vllm-agg")
    ready = {c["type"]: c["status"] for c in graph["status"]["conditions"]}
    assert ready.get("Ready") == "True", graph["status"]
    pcs = cp.client.get(f"/apis/grove.io/v1alpha1/namespaces/{GRAPH_NAMESPACE}/podcliquesets/vllm-agg")
    owner = next(r for r in pcs["metadata"]["ownerReferences"] if r.get("controller"))
    assert (owner["kind"], owner["uid"]) == ("DynamoGraphDeployment", graph["metadata"]["uid"])
    assert re.search(r"^podcliqueset\.grove\.io/vllm-agg\s", output, re.M), output[-2000:]
