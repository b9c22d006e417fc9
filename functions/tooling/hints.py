"""The flag that fixes an error: a line the command line adds under a step's Fatal result or warning.

The function's own messages name no flag (in Crossplane there are none: the object is missing from the cluster);
offline the object is missing from the command line, and the hint says how to give it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# What a hint asks for -> the flag of each command that gives it.
REQUIRED, OPERATOR_CONFIG = "required", "operator-config"
FLAGS = {
    "render": {REQUIRED: "-e/--required-resources FILE", OPERATOR_CONFIG: "-e/--required-resources FILE"},
    "validate": {OPERATOR_CONFIG: "--operator-config FILE"},
}


@dataclass(frozen=True)
class Hint:
    pattern: re.Pattern[str]
    needs: str  # REQUIRED or OPERATOR_CONFIG
    text: str  # formatted with the pattern's groups and {flag}


HINTS = (
    Hint(
        re.compile(r"PersistentVolumeClaim (?P<ns>[^/\s]+)/(?P<name>\S+) does not exist"),
        REQUIRED,
        "pass the PersistentVolumeClaim {ns}/{name} with {flag} (e.g. kubectl get pvc {name} -n {ns} -o yaml)",
    ),
    Hint(
        re.compile(r"model cache PVC (?P<name>\S+) not found in namespace (?P<ns>\S+)"),
        REQUIRED,
        "pass the PersistentVolumeClaim {ns}/{name} with {flag} (e.g. kubectl get pvc {name} -n {ns} -o yaml)",
    ),
    Hint(
        re.compile(r"DynamoPlatform '(?P<platform>[^']+)' is not ready: its EnvironmentConfig (?P<name>\S+) does"),
        REQUIRED,
        "the DynamoPlatform {platform}'s EnvironmentConfig {name} can be given with {flag} "
        "(e.g. kubectl get environmentconfig {name} -o yaml)",
    ),
    Hint(
        re.compile(r"DynamoCheckpoint (?P<ns>[^/\s]+)/(?P<name>\S+) does not exist"),
        REQUIRED,
        "pass the DynamoCheckpoint {ns}/{name} with {flag} (e.g. kubectl get dynamocheckpoint {name} -n {ns} -o yaml)",
    ),
    Hint(
        re.compile(r"checkpoint functionality is disabled in the operator configuration"),
        OPERATOR_CONFIG,
        "give an operator configuration that enables it, the dynamo-platform EnvironmentConfig "
        "(e.g. examples/operator-config.yaml), with {flag}",
    ),
)


def hints_for(message: str, command: str) -> list[str]:
    """The hints for a message, naming ``command``'s flags; none where the command has no such flag."""
    flags = FLAGS[command]
    found = []
    for hint in HINTS:
        match = hint.pattern.search(message)
        if match and hint.needs in flags:
            found.append(hint.text.format(**match.groupdict(), flag=flags[hint.needs]))
    return found
