"""The Job that loads a LoRA adapter onto a DynamoModel's endpoints (docs/upstream/checkpoint-gms-dgdr-model.md §5).

Upstream's controller makes the HTTP calls itself; a composition function must stay deterministic and make no
network calls, so it composes this Job instead: one per generation of the endpoint set (its name carries a hash
of the adapter and the endpoints) and attempt, which ``POST``s ``<address>/v1/loras`` to every endpoint with
upstream's body, limits (15 s a request, 10 at a time) and headers, and reports each endpoint's HTTP status and
error text in its container's termination message. The DynamoModel step reads that message from the Job's pod,
and when some endpoint failed composes the next attempt, which waits 30 s first as upstream's requeue does.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

JOB_RESOURCE = "lora-load-job"
MODEL_LABEL = "nvidia.com/dynamo-model"
SET_LABEL = "nvidia.com/lora-load-set"
ATTEMPT_LABEL = "nvidia.com/lora-load-attempt"
RETRY_SECONDS = 30  # a retry waits as upstream's requeue does
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
CONTAINER = "load"
PARALLEL = 10
REQUEST_SECONDS = 15
DEADLINE_SECONDS = 120
MESSAGE_LIMIT = 160  # characters of an error body kept per endpoint (the termination message holds 4 KiB)
# $1: seconds to wait first, $2: the JSON request body, then the endpoint addresses. Each call writes one JSON
# line; at most PARALLEL run at once.
LOAD_SCRIPT = f"""set -u
sleep "$1"; shift
body=/tmp/request.json; printf '%s' "$1" > "$body"; shift
out=/tmp/results; : > "$out"
load() {{
  code=$(curl -sS -o /tmp/body.$$ -w '%{{http_code}}' --max-time {REQUEST_SECONDS} --proto =http \\
    -X POST -H 'Content-Type: application/json' --data-binary @"$body" "$1/v1/loras" 2>/tmp/err.$$) || code=0
  text=$(head -c {MESSAGE_LIMIT} /tmp/body.$$ 2>/dev/null; head -c {MESSAGE_LIMIT} /tmp/err.$$ 2>/dev/null)
  text=$(printf '%s' "$text" | tr -d '\\000-\\037' | sed 's/\\\\/\\\\\\\\/g; s/"/\\\\"/g')
  printf '{{"address":"%s","code":%s,"message":"%s"}}\\n' "$1" "$code" "$text" >> "$out"
}}
n=0
for address in "$@"; do
  load "$address" &
  n=$((n + 1))
  if [ "$n" -ge {PARALLEL} ]; then wait; n=0; fi
done
wait
sort "$out" > /dev/termination-log
"""


def load_set(model: str, uri: str, addresses: list[str]) -> str:
    """The hash of what a load Job does: a new Job when the adapter or the endpoint set changes."""
    return hashlib.sha256(json.dumps([model, uri, sorted(addresses)]).encode()).hexdigest()[:10]


def job_name(claim_name: str, digest: str, attempt: int) -> str:
    """``<model>-lora-<set>-<attempt>``: a retry of the same set is a new Job."""
    return f"{claim_name[:36].rstrip('-.')}-lora-{digest}-{attempt}"


def render_lora_job(
    claim_name: str, namespace: str, model_name: str, uri: str, addresses: list[str], image: str, attempt: int
) -> dict[str, Any]:
    """The load Job; a retry (``attempt`` > 1) first waits ``RETRY_SECONDS``."""
    body = json.dumps({"lora_name": model_name, "source": {"uri": uri}}, separators=(",", ":"))
    digest = load_set(model_name, uri, addresses)
    name = job_name(claim_name, digest, attempt)
    labels = {MODEL_LABEL: claim_name, SET_LABEL: digest, ATTEMPT_LABEL: str(attempt)}
    wait = str(RETRY_SECONDS if attempt > 1 else 0)
    container = {
        "name": CONTAINER,
        "image": image,
        "command": ["/bin/sh", "-c", LOAD_SCRIPT, "lora-load", wait, body, *sorted(addresses)],
        "terminationMessagePolicy": "File",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "runAsUser": 100,
        },
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": DEADLINE_SECONDS,
            "template": {
                "metadata": {"labels": labels, "annotations": {"sidecar.istio.io/inject": "false"}},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "containers": [container],
                    "volumes": [{"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }
