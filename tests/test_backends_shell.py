"""Flag injection, shell quoting, multinode host/rank expressions and the wait-for-leader script
(docs/upstream/operator.md §1.2, §2.4; upstream utils.go, backend_sglang.go isPythonCommand, grove.go, lws.go,
backend_vllm.go)."""

from __future__ import annotations

import ast
import os
import socket
import subprocess
import sys
import threading

import pytest

from functions.kube.backends import (
    MultinodeRole,
    compilation_cache_env,
    host_names,
    leader_host,
    node_rank,
    wait_leader_configmap,
    wait_leader_configmap_name,
    wait_leader_script,
)
from functions.kube.backends import leader_wait_script as script_module
from functions.kube.backends.shell import inject_flags, insert_after_module, is_python_command, shell_quote

GROVE_LEADER = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-ldr-0.$(GROVE_HEADLESS_SERVICE)"


def _role(pathway: str = "grove", role: str = "leader", nodes: int = 2, key: str = "test-service") -> MultinodeRole:
    return MultinodeRole(pathway=pathway, role=role, node_count=nodes, component_key=key, graph_name="g", namespace="n")


# upstream TestIsPythonCommand table
@pytest.mark.parametrize(
    ("executable", "expected"),
    [
        ("python", True),
        ("python3", True),
        ("python2", True),
        ("python3.11", True),
        ("python3.12.1", True),
        ("/usr/bin/python3.8", True),
        ("/home/user/.pyenv/shims/python3.9", True),
        ("./python3", True),
        ("bin/python3.10", True),
        ("java", False),
        ("sh", False),
        ("python-config", False),
        ("/usr/bin/python-config", False),
        ("", False),
        ("python ", False),
        ("pythonx", False),
        ("/usr/bin/", False),
        ("python/", False),
    ],
)
def test_is_python_command(executable: str, expected: bool) -> None:
    assert is_python_command(executable) is expected


# upstream TestShellQuoteForBashC table
@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("--model-path", "--model-path"),
        ("/usr/bin/python3", "/usr/bin/python3"),
        ("", ""),
        (
            '{"load_format": "DUMMY", "tensor_parallel_size": 8}',
            '"{\\"load_format\\": \\"DUMMY\\", \\"tensor_parallel_size\\": 8}"',
        ),
        ("$HOME/path", '"\\$HOME/path"'),
        ("hello `world`", '"hello \\`world\\`"'),
        ("path\\to\\file", '"path\\\\to\\\\file"'),
        ("it's", '"it\'"\'"\'s"'),
        ("a[0]", '"a[0]"'),
        ("wow!", '"wow!"'),
    ],
)
def test_shell_quote(token: str, expected: str) -> None:
    assert shell_quote(token) == expected


FLAGS = "--a 1 --b x"


@pytest.mark.parametrize(
    ("text", "framework", "expected"),
    [
        ("python3 -m dynamo.vllm", "vllm", "python3 -m dynamo.vllm --a 1 --b x"),
        ("python -m dynamo.sglang --z 2", "sglang", "python -m dynamo.sglang --a 1 --b x --z 2"),
        (
            "echo blah | wc -l && python -m dynamo.sglang && ls -al",
            "sglang",
            "echo blah | wc -l && python -m dynamo.sglang --a 1 --b x && ls -al",
        ),
        (
            "python3 -m dynamo.vllm --x 8 | tee /tmp/log",
            "vllm",
            "python3 -m dynamo.vllm --a 1 --b x --x 8 | tee /tmp/log",
        ),
        ("python3 -m dynamo.sglang.worker --y", "sglang", "python3 -m dynamo.sglang.worker --a 1 --b x --y"),
        ("python3 -m some.other.module", "sglang", "python3 -m some.other.module"),
        ("echo sglang", "sglang", "echo sglang"),
        # upstream HEAD injectFlagsIntoPythonCommand: only python commands, every one of them, after the last
        # framework token before a shell operator
        ("cd /w && vllm serve m --tensor-parallel-size 16", "vllm", "cd /w && vllm serve m --tensor-parallel-size 16"),
        (
            "python3 -m dynamo.vllm --model /m/vllm-7b --tp 16",
            "vllm",
            "python3 -m dynamo.vllm --model /m/vllm-7b --a 1 --b x --tp 16",
        ),
        (
            "python3 -m dynamo.vllm --x; python3 -m dynamo.vllm --y",
            "vllm",
            "python3 -m dynamo.vllm --a 1 --b x --x; python3 -m dynamo.vllm --a 1 --b x --y",
        ),
    ],
)
def test_insert_after_module(text: str, framework: str, expected: str) -> None:
    assert insert_after_module(text, framework, FLAGS) == expected


@pytest.mark.parametrize(
    ("command", "args", "needs_shell", "expected_command", "expected_args"),
    [
        pytest.param(
            ["python3"], ["-m", "dynamo.sglang"], False, ["python3"], ["-m", "dynamo.sglang", "--a", "1", "--b", "x"],
            id="python-append",
        ),
        pytest.param(
            ["python3", "-m", "dynamo.sglang"], ["--model-path", "Qwen/Qwen3-0.6B"], True, ["sh", "-c"],
            ["exec python3 -m dynamo.sglang --model-path Qwen/Qwen3-0.6B --a 1 --b x"], id="python-shell-wrap",
        ),
        pytest.param(
            ["python3", "-m", "dynamo.sglang"], [], True, ["sh", "-c"], ["exec python3 -m dynamo.sglang --a 1 --b x"],
            id="python-shell-wrap-no-args",
        ),
        pytest.param(
            ["/home/user/.pyenv/shims/python3.9"], ["-m", "dynamo.sglang", "--cfg", '{"k": 1}'], True, ["sh", "-c"],
            ['exec /home/user/.pyenv/shims/python3.9 -m dynamo.sglang --cfg "{\\"k\\": 1}" --a 1 --b x'],
            id="python-shell-wrap-quotes-args",
        ),
        pytest.param(
            ["sh", "-c"], ["echo start", "python -m dynamo.sglang", "python -m dynamo.sglang --o"], True,
            ["sh", "-c"], ["echo start", "python -m dynamo.sglang --a 1 --b x", "python -m dynamo.sglang --o"],
            id="shell-first-matching-arg-only",
        ),
        pytest.param(
            ["java"], ["-jar", "app.jar"], True, ["java"], ["-jar", "app.jar"], id="other-command-untouched",
        ),
    ],
)  # fmt: skip
def test_inject_flags(
    command: list[str], args: list[str], needs_shell: bool, expected_command: list[str], expected_args: list[str]
) -> None:
    container = {"name": "main", "command": list(command), "args": list(args)}
    inject_flags(container, FLAGS, needs_shell, "sglang")
    assert container["command"] == expected_command
    assert container["args"] == expected_args


@pytest.mark.parametrize(
    ("role", "leader", "rank", "needs_shell"),
    [
        (_role("grove", "leader"), GROVE_LEADER, "0", False),
        (_role("grove", "worker"), GROVE_LEADER, "$((GROVE_PCLQ_POD_INDEX + 1))", True),
        (_role("lws", "leader"), "$(LWS_LEADER_ADDRESS)", "0", False),
        (_role("lws", "worker"), "$(LWS_LEADER_ADDRESS)", "$(LWS_WORKER_INDEX)", False),
        (
            _role("grove", "worker", key="VllmWorker"),
            "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-vllmworker-ldr-0.$(GROVE_HEADLESS_SERVICE)",
            "$((GROVE_PCLQ_POD_INDEX + 1))",
            True,
        ),
    ],
)
def test_leader_and_rank(role: MultinodeRole, leader: str, rank: str, needs_shell: bool) -> None:
    assert leader_host(role) == leader
    assert node_rank(role) == (rank, needs_shell)


def test_grove_host_names() -> None:
    assert host_names(_role("grove", nodes=3)) == [
        GROVE_LEADER,
        "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-wkr-0.$(GROVE_HEADLESS_SERVICE)",
        "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-wkr-1.$(GROVE_HEADLESS_SERVICE)",
    ]


def test_lws_worker_host_names_insert_index_before_first_dot() -> None:
    hosts = host_names(_role("lws", nodes=3))
    assert hosts[0] == "$(LWS_LEADER_ADDRESS)"
    # the worker entries are shell expressions: evaluate them the way the leader's sh -c does
    env = {**os.environ, "LWS_LEADER_ADDRESS": "trt-decode-0-0.trt-decode-0.team-ns"}
    out = subprocess.run(["sh", "-c", f"echo {' '.join(hosts[1:])}"], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["trt-decode-0-0-1.trt-decode-0.team-ns", "trt-decode-0-0-2.trt-decode-0.team-ns"]


def test_compilation_cache_env() -> None:
    assert compilation_cache_env("/cache/vllm") == {"name": "VLLM_CACHE_ROOT", "value": "/cache/vllm"}


def test_wait_leader_configmap() -> None:
    cm = wait_leader_configmap("my-dgd", "my-ns")
    assert cm["apiVersion"] == "v1"
    assert cm["kind"] == "ConfigMap"
    assert cm["metadata"]["name"] == "my-dgd-wait-leader-script"
    assert cm["metadata"]["namespace"] == "my-ns"
    assert cm["metadata"]["labels"] == {"nvidia.com/dynamo-graph-deployment-name": "my-dgd"}
    assert list(cm["data"]) == ["wait-for-leader.py"]
    script = cm["data"]["wait-for-leader.py"]
    assert script == wait_leader_script()
    ast.parse(script)
    assert 'os.environ["LEADER_HOST"]' in script
    assert 'os.environ["LEADER_PORT"]' in script
    assert wait_leader_configmap_name("foo") == "foo-wait-leader-script"


def test_wait_leader_script_uses_stdlib_only() -> None:
    tree = ast.parse(wait_leader_script())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported <= set(sys.stdlib_module_names)


def test_wait_leader_script_exits_once_the_port_accepts() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    accepted = threading.Thread(target=lambda: server.accept()[0].close(), daemon=True)
    accepted.start()
    env = {**os.environ, "LEADER_HOST": "localhost", "LEADER_PORT": str(port)}
    try:
        result = subprocess.run(
            [sys.executable, "-c", wait_leader_script()], env=env, capture_output=True, text=True, timeout=30
        )
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    assert f"leader localhost:{port}" in result.stdout


@pytest.mark.parametrize(
    ("pods", "expected"),
    [
        ([], "no pod has address 10.0.0.5 yet"),
        ([{"metadata": {"name": "ldr"}, "status": {"phase": "Running"}}], None),
        ([{"metadata": {"name": "ldr"}, "status": {"phase": "Pending"}}], "pod ldr at 10.0.0.5 is Pending"),
        (
            [
                {
                    "metadata": {"name": "ldr", "deletionTimestamp": "2026-01-01T00:00:00Z"},
                    "status": {"phase": "Running"},
                }
            ],
            "pod ldr at 10.0.0.5 is terminating",
        ),
    ],
)
def test_wait_leader_pod_problem(pods: list[dict], expected: str | None) -> None:
    assert script_module.pod_problem(pods, "10.0.0.5") == expected
