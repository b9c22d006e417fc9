"""The profiling Job's ``output-copier`` sidecar script
(``functions.kinds.request.profiling_copier.COPIER_SCRIPT``), run for real with ``/bin/sh -c`` as the pod runs it.

No API server runs here and no kubectl is shipped: a fake ``kubectl`` written into a temporary directory placed first
on PATH stands in for the API server. ``kubectl apply -f FILE`` keeps a numbered copy of every manifest the script
applies (so a test reads each ConfigMap in order), and ``kubectl get pod ...`` answers the profiler container's
termination reason from a control file (empty: the profiler still runs; ``Completed`` or ``Error``: it ended) and
logs the query. The script's hard-coded ``/data`` (the profiler's output volume) and its scratch manifest path are
pointed into the test's temporary directory by a plain string replace that must hit exactly once.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from functions.kinds.request.profiling_copier import COPIER_SCRIPT
from harness.poll import until

TIMEOUT = 30  # seconds; a hanging script fails the test instead of blocking the run

IDENTITY = {
    "DGDR_NAMESPACE": "team-a",
    "DGDR_LABEL": "vllm-sla",
    "OUTPUT_CONFIGMAP": "dgdr-output-vllm-sla",
    "POD_NAME": "vllm-sla-profile-7x2kq",
    "OWNER_API_VERSION": "nvidia.com/v1beta1",
    "OWNER_KIND": "DynamoGraphDeploymentRequest",
    "OWNER_NAME": "vllm-sla",
    "OWNER_UID": "5d0f6c1e-8b2a-4c3d-9e7f-0a1b2c3d4e5f",
}

PROFILER_QUERY = (
    "get pod vllm-sla-profile-7x2kq -n team-a -o "
    'jsonpath={.status.containerStatuses[?(@.name=="profiler")].state.terminated.reason}'
)

RUNNING_KEYS = {"phase", "message"}
SUCCESS_KEYS = {"phase", "message", "profiler_status", "final_config.yaml", "profiler_status.yaml"}
FAILED_KEYS = {"phase", "message", "profiler_status", "profiler_error", "profiler_status.yaml"}

FAKE_KUBECTL = """#!/bin/sh
# Fake kubectl: stands in for the API server in test_request_copier.py.
set -eu
case "${1:-}" in
  apply)
    if [ "$#" -ne 3 ] || [ "$2" != "-f" ]; then
      echo "fake kubectl: unexpected arguments: $*" >&2
      exit 2
    fi
    refusals=$(cat "$FAKE_DIR/apply_refusals")
    if [ "$refusals" -gt 0 ]; then  # the API server is unreachable for this many applies
      echo $((refusals - 1)) > "$FAKE_DIR/apply_refusals"
      echo "fake kubectl: the connection to the server was refused" >&2
      exit 1
    fi
    n=$(ls "$FAKE_DIR/applied" | wc -l)
    cp "$3" "$FAKE_DIR/applying.tmp"
    mv "$FAKE_DIR/applying.tmp" "$FAKE_DIR/applied/$(printf '%04d' $((n + 1))).yaml"
    echo "configmap/$OUTPUT_CONFIGMAP configured"
    ;;
  get)
    printf '%s\\n' "$*" >> "$FAKE_DIR/get.log"
    if [ -f "$FAKE_DIR/status_on_get" ]; then  # the profiler's last write, just as it ends
      mv "$FAKE_DIR/status_on_get" "$FAKE_DIR/data/profiler_status.yaml"
    fi
    cat "$FAKE_DIR/profiler_state"
    ;;
  *)
    echo "fake kubectl: unexpected command: $*" >&2
    exit 2
    ;;
esac
"""

# A multi-document DynamoGraphDeployment with the awkward bits: a first line starting with spaces, a line starting
# with '#', colons in values, blank lines inside a block scalar, a fully indented document and a trailing blank line.
FINAL_CONFIG = """\
  # dynamo.profiler: the best configuration found for ttft <= 200ms and itl <= 20ms
# apply with: kubectl apply -f final_config.yaml
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: vllm-sla
  annotations:
    nvidia.com/sla: "ttft: 200ms, itl: 20ms"
spec:
  services:
    Frontend:
      replicas: 1
    VllmDecodeWorker:
      replicas: 2
      extraPodSpec:
        mainContainer:
          command: [/bin/sh, -c]
          args:
          - |
            python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B \\

            # the sweep picked a small KV cache: 0.5
              --gpu-memory-utilization 0.5
---
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: vllm-sla-planner
  data:
    note: 'a key: value inside a value'

"""

SUCCESS_STATUS = 'status: success\nphase: Done\nmessage: "profiling completed"\n'


class Sandbox:
    """Where one run lives: the fake /data, the fake kubectl's bin directory and its control and log files."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data, self.bin, self.applied = root / "data", root / "bin", root / "applied"
        self.status_file = self.data / "profiler_status.yaml"
        self.final_config = self.data / "final_config.yaml"
        self.profiler_state = root / "profiler_state"
        self.status_on_get = root / "status_on_get"  # moved over the status file by the next get: the final write
        self.apply_refusals = root / "apply_refusals"  # how many of the next applies fail (an unreachable API server)
        self.get_log = root / "get.log"
        self.cm_file = root / "output-configmap.yaml"


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    sb = Sandbox(tmp_path)
    for directory in (sb.data, sb.bin, sb.applied):
        directory.mkdir()
    kubectl = sb.bin / "kubectl"
    kubectl.write_text(FAKE_KUBECTL)
    kubectl.chmod(0o755)
    sb.profiler_state.write_text("")
    sb.apply_refusals.write_text("0")
    return sb


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` in one step, so the polling script never reads a half-written file."""
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_text(text)
    os.replace(scratch, path)


def copier_script(sb: Sandbox) -> str:
    script = COPIER_SCRIPT
    for old, new in (
        ("out=/data\n", f"out={sb.data}\n"),
        ("cm_file=/tmp/output-configmap.yaml\n", f"cm_file={sb.cm_file}\n"),
    ):
        assert script.count(old) == 1, f"the copier script no longer has exactly one {old!r}: update this test"
        script = script.replace(old, new)
    return script


def copier_env(sb: Sandbox, poll: int, status_wait: int, **overrides: str) -> dict[str, str]:
    return {
        "PATH": f"{sb.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "FAKE_DIR": str(sb.root),
        "POLL_SECONDS": str(poll),
        "STATUS_WAIT_SECONDS": str(status_wait),
        **IDENTITY,
        **overrides,
    }


def run_copier(sb: Sandbox, poll: int = 1, status_wait: int = 2, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/sh", "-c", copier_script(sb)],
        env=copier_env(sb, poll, status_wait, **env),
        cwd=sb.root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.fixture
def start_copier(sandbox: Sandbox) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Starts the script in the background; whatever is still running at teardown is killed."""
    started: list[subprocess.Popen[str]] = []

    def start(poll: int = 1, status_wait: int = 2, **env: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", copier_script(sandbox)],
            env=copier_env(sandbox, poll, status_wait, **env),
            cwd=sandbox.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=TIMEOUT)


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """Wait for the background script; its exit code and stderr."""
    _, stderr = proc.communicate(timeout=TIMEOUT)
    return proc.returncode, stderr


def wait_until(condition: Callable[[], bool], what: str, proc: subprocess.Popen[str], timeout: float = 15) -> None:
    """Until ``condition()``; a failure naming ``what`` when the copier exits first (with its stderr), or after
    ``timeout``."""

    def exited() -> str | None:
        if proc.poll() is None or condition():
            return None
        return f"the copier exited ({proc.returncode}) first: {proc.stderr.read() if proc.stderr else ''}"

    until(what, condition, timeout, every=0.01, stop=exited)


def applied_texts(sb: Sandbox) -> list[str]:
    return [path.read_text() for path in sorted(sb.applied.glob("*.yaml"))]


def applied(sb: Sandbox) -> list[dict[str, Any]]:
    return [yaml.safe_load(text) for text in applied_texts(sb)]


def apply_count(sb: Sandbox) -> int:
    return len(list(sb.applied.glob("*.yaml")))


def pod_queries(sb: Sandbox) -> list[str]:
    """Every ``kubectl get`` the script made, complete lines only."""
    if not sb.get_log.exists():
        return []
    text = sb.get_log.read_text()
    return text[: text.rfind("\n") + 1].splitlines()


def wait_for_polls(sb: Sandbox, proc: subprocess.Popen[str], polls: int) -> None:
    """Wait until the script has asked about the profiler ``polls`` more times: right after an answer it sleeps, so
    a file changed now is read whole on its next poll."""
    target = len(pod_queries(sb)) + polls
    wait_until(lambda: len(pod_queries(sb)) >= target, f"{polls} more profiler polls", proc)


def output_data(configmap: dict[str, Any], name: str = "vllm-sla", namespace: str = "team-a") -> dict[str, str]:
    """Check the ConfigMap's envelope (identity, labels, the single controller reference) and return its data."""
    assert set(configmap) == {"apiVersion", "kind", "metadata", "data"}
    assert configmap["apiVersion"] == "v1"
    assert configmap["kind"] == "ConfigMap"
    assert configmap["metadata"] == {
        "name": f"dgdr-output-{name}",
        "namespace": namespace,
        "labels": {
            "dgdr.nvidia.com/name": name,
            "dgdr.nvidia.com/namespace": namespace,
            "nvidia.com/managed-by": "dynamo-operator",
        },
        "ownerReferences": [
            {
                "apiVersion": "nvidia.com/v1beta1",
                "kind": "DynamoGraphDeploymentRequest",
                "name": name,
                "uid": IDENTITY["OWNER_UID"],
                "controller": True,
            }
        ],
    }
    data = configmap["data"]
    assert all(isinstance(value, str) for value in data.values()), data
    return data


def assert_only_profiler_queries(sb: Sandbox) -> None:
    assert set(pod_queries(sb)) <= {PROFILER_QUERY}, pod_queries(sb)


def test_the_data_directory_is_replaced_exactly_once() -> None:
    assert COPIER_SCRIPT.count("out=/data") == 1
    assert COPIER_SCRIPT.count("cm_file=/tmp/output-configmap.yaml") == 1


def test_a_successful_profile_publishes_the_generated_graph(sandbox: Sandbox) -> None:
    sandbox.final_config.write_text(FINAL_CONFIG)
    sandbox.status_file.write_text(SUCCESS_STATUS)

    result = run_copier(sandbox)

    assert result.returncode == 0, result.stderr
    (configmap,) = applied(sandbox)
    data = output_data(configmap)
    assert set(data) == SUCCESS_KEYS
    assert data["profiler_status"] == "success"
    assert data["phase"] == "Done"
    assert data["message"] == "profiling completed"
    published = data["final_config.yaml"]
    assert published.rstrip("\n") == FINAL_CONFIG.rstrip("\n")
    assert published.endswith("\n") and not published.endswith("\n\n")  # the block scalar's clip chomping
    assert list(yaml.safe_load_all(published)) == list(yaml.safe_load_all(FINAL_CONFIG))
    assert len(list(yaml.safe_load_all(published))) == 2
    assert data["profiler_status.yaml"] == SUCCESS_STATUS
    assert_only_profiler_queries(sandbox)


def test_a_success_without_a_phase_is_published_as_done(sandbox: Sandbox) -> None:
    sandbox.final_config.write_text("apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\n")
    sandbox.status_file.write_text("status: success\nmessage: all done\n")

    result = run_copier(sandbox)

    assert result.returncode == 0, result.stderr
    (configmap,) = applied(sandbox)
    data = output_data(configmap)
    assert (data["phase"], data["message"], data["profiler_status"]) == ("Done", "all done", "success")


def test_a_failure_reported_by_the_profiler_is_published_with_its_error(sandbox: Sandbox) -> None:
    status = (
        "status: failed\nphase: SweepingDecode\n"
        'error: "CUDA out of memory: tried to allocate 2 GiB"\nmessage: decode sweep failed\n'
    )
    sandbox.status_file.write_text(status)

    result = run_copier(sandbox)

    assert result.returncode == 0, result.stderr
    (configmap,) = applied(sandbox)
    data = output_data(configmap)
    assert set(data) == FAILED_KEYS
    assert "final_config.yaml" not in data
    assert data["profiler_status"] == "failed"
    assert data["profiler_error"] == "CUDA out of memory: tried to allocate 2 GiB"
    assert data["phase"] == "SweepingDecode"
    assert data["message"] == "decode sweep failed"
    assert data["profiler_status.yaml"] == status


def test_progress_is_published_once_per_change_then_the_result(
    sandbox: Sandbox, start_copier: Callable[..., subprocess.Popen[str]]
) -> None:
    proc = start_copier(poll=1)
    wait_for_polls(sandbox, proc, 1)  # no status file yet: nothing to publish
    assert apply_count(sandbox) == 0

    write_atomically(sandbox.status_file, "status: running\nphase: SweepingPrefill\nmessage: sweeping TP configs\n")
    wait_until(lambda: apply_count(sandbox) == 1, "the first progress apply", proc)
    wait_for_polls(sandbox, proc, 3)
    assert apply_count(sandbox) == 1, "an unchanged phase and message were applied again"

    write_atomically(
        sandbox.status_file, "status: running\nphase: SweepingDecode\nmessage: sweeping decode concurrency\n"
    )
    wait_until(lambda: apply_count(sandbox) == 2, "the second progress apply", proc)
    wait_for_polls(sandbox, proc, 3)
    assert apply_count(sandbox) == 2, "an unchanged phase and message were applied again"

    write_atomically(sandbox.final_config, FINAL_CONFIG)
    write_atomically(sandbox.status_file, SUCCESS_STATUS)
    returncode, stderr = finish(proc)

    assert returncode == 0, stderr
    published = [output_data(configmap) for configmap in applied(sandbox)]
    assert [data["phase"] for data in published] == ["SweepingPrefill", "SweepingDecode", "Done"]
    assert [data["message"] for data in published] == [
        "sweeping TP configs",
        "sweeping decode concurrency",
        "profiling completed",
    ]
    assert [set(data) for data in published] == [RUNNING_KEYS, RUNNING_KEYS, SUCCESS_KEYS]
    assert_only_profiler_queries(sandbox)


def test_a_new_message_in_the_same_phase_is_published_and_a_status_without_phase_is_not(
    sandbox: Sandbox, start_copier: Callable[..., subprocess.Popen[str]]
) -> None:
    write_atomically(sandbox.status_file, "status: running\nmessage: loading the model\n")
    proc = start_copier(poll=1)
    wait_for_polls(sandbox, proc, 2)
    assert apply_count(sandbox) == 0, "a status without a phase was published"

    write_atomically(sandbox.status_file, "status: running\nphase: SweepingDecode\nmessage: concurrency 8\n")
    wait_until(lambda: apply_count(sandbox) == 1, "the first progress apply", proc)
    wait_for_polls(sandbox, proc, 1)
    write_atomically(sandbox.status_file, "status: running\nphase: SweepingDecode\nmessage: concurrency 16\n")
    wait_until(lambda: apply_count(sandbox) == 2, "the apply of the new message", proc)
    wait_for_polls(sandbox, proc, 2)
    assert apply_count(sandbox) == 2

    write_atomically(sandbox.status_file, "status: failed\nphase: SweepingDecode\nerror: OOM\nmessage: gave up\n")
    returncode, stderr = finish(proc)

    assert returncode == 0, stderr
    published = [output_data(configmap) for configmap in applied(sandbox)]
    assert [(data["phase"], data["message"]) for data in published] == [
        ("SweepingDecode", "concurrency 8"),
        ("SweepingDecode", "concurrency 16"),
        ("SweepingDecode", "gave up"),
    ]
    assert published[-1]["profiler_error"] == "OOM"


def test_a_profiler_that_ended_without_a_status_file_fails_the_job(sandbox: Sandbox) -> None:
    sandbox.profiler_state.write_text("Error")

    started = time.monotonic()
    result = run_copier(sandbox, poll=1, status_wait=2)
    elapsed = time.monotonic() - started

    assert result.returncode == 1
    assert applied_texts(sandbox) == []
    assert f"no {sandbox.status_file} 2s after the profiler ended" in result.stderr
    # waited 0, 1, 2 seconds: three looks at the profiler, the last one gives up
    assert pod_queries(sandbox) == [PROFILER_QUERY] * 3
    assert elapsed >= 2


def test_a_status_file_written_soon_after_the_profiler_ended_is_still_published(
    sandbox: Sandbox, start_copier: Callable[..., subprocess.Popen[str]]
) -> None:
    sandbox.profiler_state.write_text("Completed")
    proc = start_copier(poll=1, status_wait=10)
    wait_for_polls(sandbox, proc, 1)

    write_atomically(sandbox.final_config, FINAL_CONFIG)
    write_atomically(sandbox.status_file, SUCCESS_STATUS)
    returncode, stderr = finish(proc)

    assert returncode == 0, stderr
    (configmap,) = applied(sandbox)
    assert output_data(configmap)["profiler_status"] == "success"


def test_a_profiler_that_ended_while_still_running_fails_the_job_after_publishing_its_phase(
    sandbox: Sandbox,
) -> None:
    sandbox.profiler_state.write_text("Completed")
    sandbox.status_file.write_text("status: running\nphase: GeneratingDGD\nmessage: writing the graph\n")

    result = run_copier(sandbox)

    assert result.returncode == 1
    assert result.stderr.splitlines() == ["output-copier: the profiler ended with status 'running'"]
    # the loop publishes the new phase before it looks at the profiler, then gives up on that same poll
    (configmap,) = applied(sandbox)
    data = output_data(configmap)
    assert data == {"phase": "GeneratingDGD", "message": "writing the graph"}
    assert pod_queries(sandbox) == [PROFILER_QUERY]


@pytest.mark.parametrize(
    ("final_status", "keys"),
    [
        pytest.param(SUCCESS_STATUS, SUCCESS_KEYS, id="success"),
        pytest.param("status: failed\nphase: GeneratingDGD\nerror: no config met the SLA\n", FAILED_KEYS, id="failed"),
    ],
)
def test_a_final_status_written_as_the_profiler_ends_is_not_taken_for_a_crash(
    sandbox: Sandbox, final_status: str, keys: set[str]
) -> None:
    sandbox.profiler_state.write_text("Completed")
    sandbox.final_config.write_text(FINAL_CONFIG)
    sandbox.status_file.write_text("status: running\nphase: GeneratingDGD\nmessage: writing the graph\n")
    sandbox.status_on_get.write_text(final_status)

    result = run_copier(sandbox)

    assert result.returncode == 0, result.stderr
    published = [output_data(configmap) for configmap in applied(sandbox)]
    assert [set(data) for data in published] == [RUNNING_KEYS, keys]
    assert published[-1]["profiler_status.yaml"] == final_status
    assert pod_queries(sandbox) == [PROFILER_QUERY]


def test_a_result_the_api_server_refused_fails_the_job(sandbox: Sandbox) -> None:
    sandbox.final_config.write_text(FINAL_CONFIG)
    sandbox.status_file.write_text(SUCCESS_STATUS)
    sandbox.apply_refusals.write_text("1")

    result = run_copier(sandbox)

    assert result.returncode == 1
    assert applied_texts(sandbox) == []
    assert "the connection to the server was refused" in result.stderr


def test_a_refused_progress_apply_is_retried_on_the_next_poll(
    sandbox: Sandbox, start_copier: Callable[..., subprocess.Popen[str]]
) -> None:
    sandbox.apply_refusals.write_text("1")
    write_atomically(sandbox.status_file, "status: running\nphase: SweepingPrefill\nmessage: sweeping TP configs\n")
    proc = start_copier(poll=1)
    wait_until(lambda: apply_count(sandbox) == 1, "the retried progress apply", proc)
    assert len(pod_queries(sandbox)) >= 1, "the apply was retried before the next poll"
    wait_for_polls(sandbox, proc, 2)
    assert apply_count(sandbox) == 1

    write_atomically(sandbox.status_file, "status: failed\nphase: SweepingPrefill\nerror: OOM\nmessage: gave up\n")
    returncode, stderr = finish(proc)

    assert returncode == 0, stderr
    assert [output_data(configmap)["message"] for configmap in applied(sandbox)] == ["sweeping TP configs", "gave up"]


def test_a_success_without_the_generated_graph_fails_the_job(sandbox: Sandbox) -> None:
    sandbox.status_file.write_text(SUCCESS_STATUS)

    result = run_copier(sandbox)

    assert result.returncode == 1
    assert applied_texts(sandbox) == []
    assert result.stderr.splitlines() == [
        f"output-copier: the profiler reported success but wrote no {sandbox.final_config}"
    ]
    assert not sandbox.cm_file.exists()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        pytest.param('message: the "fast" path isn\'t ready', 'the "fast" path isn\'t ready', id="plain"),
        pytest.param("message: \"decode: it's 'slow'\"", "decode: it's 'slow'", id="double-quoted"),
        pytest.param("message: 'the \"prefill\" sweep'", 'the "prefill" sweep', id="single-quoted"),
        # field() reads a value's first paragraph: a message with a blank line (as yaml.safe_dump writes it) is cut
        pytest.param(
            "message: 'decode sweep failed\n\n  see the profiler log'", "decode sweep failed", id="multi-line"
        ),
    ],
)
def test_a_message_with_quotes_reaches_the_configmap_as_the_script_reads_it(
    sandbox: Sandbox, line: str, expected: str
) -> None:
    status = f"status: failed\nphase: SweepingDecode\n{line}\nerror: boom\n"
    sandbox.status_file.write_text(status)

    result = run_copier(sandbox)

    assert result.returncode == 0, result.stderr
    (configmap,) = applied(sandbox)
    data = output_data(configmap)
    assert data["message"] == expected
    assert data["profiler_status.yaml"] == status  # the whole file, every line, is kept verbatim


def test_a_block_scalar_error_is_kept_whole_only_in_the_copied_status_file(sandbox: Sandbox) -> None:
    """A multi-line error with quotes survives verbatim in ``profiler_status.yaml``; ``field()`` reads lines, not
    YAML, so ``profiler_error`` gets the block's first paragraph without the indicator."""
    status = "status: failed\nphase: Initializing\nerror: |\n  line 1: \"a\"\n\n  line 3: 'b'\n"
    sandbox.status_file.write_text(status)

    result = run_copier(sandbox)

    assert result.returncode == 0, result.stderr
    (configmap,) = applied(sandbox)
    data = output_data(configmap)
    assert data["profiler_status.yaml"] == status
    assert yaml.safe_load(data["profiler_status.yaml"])["error"] == "line 1: \"a\"\n\nline 3: 'b'\n"
    assert data["profiler_error"] == 'line 1: "a"'  # the key gets the first paragraph; the step parses the file
    assert data["message"] == ""


# Found by these tests and fixed in the script: values as yaml.safe_dump writes them, a file without a final
# newline, names YAML would read as numbers or booleans.


@pytest.mark.parametrize(
    "status",
    [
        pytest.param({"message": 'waiting for "decode"'}, id="plain-value-ending-in-a-quote"),
        pytest.param({"message": "the decode worker's cache: full"}, id="single-quote-escape"),
        pytest.param(
            {
                "error": "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB "
                "of which 1.5 GiB is free."
            },
            id="folded-long-error",
        ),
    ],
)
def test_values_written_by_yaml_safe_dump_are_published_as_yaml_reads_them(
    sandbox: Sandbox, status: dict[str, str]
) -> None:
    document = {"status": "failed", "phase": "SweepingDecode", "message": "m", "error": "e", **status}
    sandbox.status_file.write_text(yaml.safe_dump(document, sort_keys=False))

    result = run_copier(sandbox)

    assert result.returncode == 0, result.stderr
    (configmap,) = applied(sandbox)
    data = output_data(configmap)
    assert (data["message"], data["profiler_error"]) == (document["message"], document["error"])


def test_a_generated_graph_without_a_final_newline_is_published_whole(sandbox: Sandbox) -> None:
    final_config = "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata:\n  name: vllm-sla"
    sandbox.final_config.write_text(final_config)
    sandbox.status_file.write_text(SUCCESS_STATUS)

    result = run_copier(sandbox)

    assert result.returncode == 0, result.stderr
    (configmap,) = applied(sandbox)
    data = output_data(configmap)
    assert set(data) == SUCCESS_KEYS
    assert data["final_config.yaml"].rstrip("\n") == final_config


@pytest.mark.parametrize("name", ["1234", "yes"])
def test_a_request_named_like_a_number_or_boolean_still_gets_string_metadata(sandbox: Sandbox, name: str) -> None:
    sandbox.status_file.write_text("status: failed\nphase: Initializing\nerror: boom\n")

    result = run_copier(
        sandbox, DGDR_LABEL=name, OWNER_NAME=name, OUTPUT_CONFIGMAP=f"dgdr-output-{name}", DGDR_NAMESPACE=name
    )

    assert result.returncode == 0, result.stderr
    (configmap,) = applied(sandbox)
    output_data(configmap, name=name, namespace=name)
