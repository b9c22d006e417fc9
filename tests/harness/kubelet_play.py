"""The kubelet's part for the Deployments of Crossplane's Helm chart, on a control plane that has no nodes.

A kubelet runs a Deployment's pod: its init containers to completion (restarting a failed one), then its
containers, with the environment the pod spec gives (values, field and resource references resolved), the
ServiceAccount's token and its Secret and emptyDir volumes mounted. ``play_pod`` does that for a chart
Deployment whose image is Crossplane's, running the Crossplane binary built from its module
(``scripts/install-tools.sh``) as the image's entrypoint; ``report_available`` then writes the status the
Deployment controller would once the pod is ready.

A pod has a network and a file system of its own; these processes share the test's. So, and only so, they
differ from the pod: mount paths are directories under the run directory (the image's paths, as the
container's flags and env name them, are mapped there); the ServiceAccount's credentials come as a
kubeconfig, and with no in-cluster namespace file leader election is off (one replica each, as the chart runs
them); the metrics and health listeners get free loopback ports; webhooks are off and Functions run under the
``External`` package runtime, because without a pod network neither the API server nor Crossplane could reach
a Service (the test runs the function itself and plays the FunctionRevision's endpoint, as
``tests/harness/crossplane_core.py`` does).
"""

from __future__ import annotations

import base64
import math
import subprocess
import time
from pathlib import Path
from typing import Any

from harness.controller_play import write_status
from harness.controlplane import ControlPlane, free_port, start_process
from harness.crossplane_rbac import service_account_kubeconfig

CROSSPLANE_IMAGE = "xpkg.crossplane.io/crossplane/crossplane"
INIT_ATTEMPTS = 6
BINARY_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9}


def quantity(text: str) -> float:
    """A Kubernetes quantity ("500m", "1024Mi", "2") as a number."""
    if text.endswith("m"):
        return float(text[:-1]) / 1000
    for suffix, factor in BINARY_SUFFIXES.items():
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def _resource_value(pod: dict[str, Any], ref: dict[str, Any]) -> str:
    """The kubelet's value for a resourceFieldRef: the limit over the divisor, rounded up."""
    containers = [*(pod.get("initContainers") or []), *pod["containers"]]
    container = next(c for c in containers if c["name"] == ref["containerName"])
    kind, name = ref["resource"].split(".", 1)
    value = quantity(str((container.get("resources") or {}).get(kind, {})[name]))
    return str(math.ceil(value / quantity(str(ref.get("divisor", "1")))))


def container_env(pod: dict[str, Any], container: dict[str, Any], namespace: str) -> dict[str, str]:
    """The container's environment as the kubelet resolves it."""
    fields = {"metadata.namespace": namespace, "spec.serviceAccountName": pod.get("serviceAccountName", "default")}
    env: dict[str, str] = {}
    for var in container.get("env") or []:
        if "value" in var:
            env[var["name"]] = str(var["value"])
        elif "fieldRef" in var.get("valueFrom", {}):
            env[var["name"]] = fields[var["valueFrom"]["fieldRef"]["fieldPath"]]
        elif "resourceFieldRef" in var.get("valueFrom", {}):
            env[var["name"]] = _resource_value(pod, var["valueFrom"]["resourceFieldRef"])
        else:
            raise ValueError(f"the kubelet play cannot resolve env {var['name']}: {var['valueFrom']}")
    return env


def _mount_volumes(cp: ControlPlane, pod: dict[str, Any], namespace: str, where: Path) -> dict[str, Path]:
    """Each volume as a directory: a Secret's keys written as files, an emptyDir empty; name -> directory."""
    mounted: dict[str, Path] = {}
    for volume in pod.get("volumes") or []:
        directory = where / volume["name"]
        directory.mkdir(parents=True, exist_ok=True)
        if "secret" in volume:
            secret = cp.client.get(f"/api/v1/namespaces/{namespace}/secrets/{volume['secret']['secretName']}")
            for key, value in (secret.get("data") or {}).items():
                (directory / key).write_bytes(base64.b64decode(value))
                (directory / key).chmod(0o600)
        elif "emptyDir" not in volume:
            raise ValueError(f"the kubelet play mounts Secrets and emptyDirs, not volume {volume['name']}")
        mounted[volume["name"]] = directory
    return mounted


def _mapped(value: str, mounts: dict[str, Path]) -> str:
    for mount_path, directory in mounts.items():
        if value == mount_path or value.startswith(mount_path + "/"):
            return str(directory) + value[len(mount_path) :]
    return value


def _no_pod_network(args: list[str], mounts: dict[str, Path], ports: dict[str, int]) -> list[str]:
    """The flags this play adds, for want of a pod's own network and file system (see the module's doc);
    ``ports`` gets the loopback port of each named container port."""
    if args[:2] == ["core", "init"]:
        return ["--enable-webhooks=false"]
    if args[:2] == ["core", "start"]:
        ports["readyz"] = free_port()
        return [
            "--leader-election=false",
            "--enable-webhooks=false",
            "--package-runtime=Function=External",
            f"--metrics-port={free_port()}",
            f"--health-probe-port={ports['readyz']}",
            f"--xpkg-cache-dir={_mapped('/cache/xpkg', mounts)}",
            f"--xfn-cache-dir={_mapped('/cache/xfn', mounts)}",
        ]
    if args[:2] == ["rbac", "start"]:
        return ["--leader-election=false"]
    return []


def _command(binary: Path, container: dict[str, Any], mounts: dict[str, Path], ports: dict[str, int]) -> list[str]:
    image = container["image"].rsplit(":", 1)[0]
    if image != CROSSPLANE_IMAGE:
        raise ValueError(f"the kubelet play runs Crossplane's image only, not {container['image']}")
    args = [_mapped(str(a), mounts) for a in container.get("args") or []]
    return [str(binary), *args, *_no_pod_network(args, mounts, ports)]


def play_pod(cp: ControlPlane, deployment: dict[str, Any], binary: Path, crds: Path) -> dict[str, int]:
    """Run the Deployment's pod: init containers to completion, then its containers, recorded by PID in ``cp``;
    the loopback port of each named container port (``readyz``: Crossplane's health probe)."""
    ports: dict[str, int] = {}
    namespace = deployment["metadata"]["namespace"]
    name = deployment["metadata"]["name"]
    pod = deployment["spec"]["template"]["spec"]
    kubeconfig = service_account_kubeconfig(cp, pod.get("serviceAccountName", "default"))
    where = cp.run_dir / "pods" / name
    volumes = _mount_volumes(cp, pod, namespace, where)

    def prepared(container: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
        mounts = {m["mountPath"]: volumes[m["name"]] for m in container.get("volumeMounts") or []}
        env = {k: _mapped(v, mounts) for k, v in container_env(pod, container, namespace).items()}
        # the image's own: its CRDs at /crds; in-cluster credentials from the pod's ServiceAccount token
        env.update({"KUBECONFIG": str(kubeconfig), "CRDS_PATH": str(crds), "PATH": "/usr/bin:/bin"})
        return _command(binary, container, mounts, ports), env

    for container in pod.get("initContainers") or []:
        argv, env = prepared(container)
        log = cp.run_dir / f"{name}-{container['name']}.log"
        cp.logs[f"{name}-{container['name']}"] = log
        for attempt in range(1, INIT_ATTEMPTS + 1):  # the kubelet restarts a failed init container, backing off
            with log.open("ab") as out:
                done = subprocess.run(argv, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=180)
            if done.returncode == 0:
                break
            if attempt == INIT_ATTEMPTS:
                raise RuntimeError(f"init container {container['name']} of {name} failed {attempt} times; see {log}")
            time.sleep(attempt)
    # The chart creates its TLS Secrets empty and the init container fills them; the kubelet refreshes a
    # Secret volume's files, so the containers see what init wrote.
    volumes = _mount_volumes(cp, pod, namespace, where)
    for container in pod["containers"]:
        argv, env = prepared(container)
        start_process(cp, f"{name}-{container['name']}", argv, env=env)
    return ports


def report_available(cp: ControlPlane, deployment: dict[str, Any]) -> None:
    """The status the Deployment controller writes once every replica's pod is ready."""
    meta = deployment["metadata"]
    path = f"/apis/apps/v1/namespaces/{meta['namespace']}/deployments/{meta['name']}"
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    replicas = cp.client.get(path)["spec"].get("replicas", 1)
    write_status(cp, path, {
        "observedGeneration": 0,  # write_status sets the generation
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "conditions": [
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
             "message": "Deployment has minimum availability.", "lastUpdateTime": now, "lastTransitionTime": now},
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
             "message": "ReplicaSet has successfully progressed.", "lastUpdateTime": now, "lastTransitionTime": now},
        ],
    })  # fmt: skip
