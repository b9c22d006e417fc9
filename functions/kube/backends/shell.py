"""Putting multinode flags into a container's launch command (docs/upstream/operator.md §2.4, "Flag injection").

Upstream facts (``utils.go`` and ``backend_sglang.go`` ``isPythonCommand``):

* a "python command" is a first command element named ``python``, ``python3``, ``python3.11`` …, optionally with a
  directory in front (``/usr/bin/python3.8``); ``python-config`` or ``pythonx`` are not;
* for a python command the flags are appended to ``args``; when a flag needs shell evaluation the container becomes
  ``sh -c "exec <cmd> <args> <flags>"`` with each command/arg token quoted for the shell;
* otherwise each arg string is tried in turn and the flags go right after every ``python… <framework>`` command in
  it (the last framework token before a shell operator); only the first arg that matches is changed, and a
  command that is not python (``vllm serve``, ``sglang serve``) gets nothing;
* the token quoting leaves plain tokens alone and double-quotes anything containing blanks, quotes, backslashes,
  braces, brackets, ``$``, backquote or ``!`` (escaping ``\\``, ``"``, ``$`` and backquote; a single quote becomes
  ``'"'"'`` so the result also survives an outer single-quoted ``bash -c '…'``).
"""

from __future__ import annotations

import re
from typing import Any

_PYTHON = re.compile(r"(?:.*/)?python\d*(?:\.\d+)*")
_NEEDS_QUOTES = frozenset(" \t\n'\"\\{}[]$`!")
_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "$": "\\$", "`": "\\`", "'": "'\"'\"'"})


def is_python_command(executable: str) -> bool:
    return bool(_PYTHON.fullmatch(executable))


def shell_quote(token: str) -> str:
    """Quote one token for ``sh -c`` the way upstream does (plain tokens unchanged)."""
    if not _NEEDS_QUOTES.intersection(token):
        return token
    return '"' + token.translate(_ESCAPES) + '"'


def quoted_line(tokens: list[str]) -> str:
    return " ".join(shell_quote(token) for token in tokens)


def insert_after_module(text: str, framework: str, flags: str) -> str:
    """``text`` with ``flags`` placed after each ``python… <…framework…>`` command (the last framework token before a
    shell operator, as upstream's greedy pattern finds it); unchanged when there is none. A bare ``vllm serve`` or
    ``sglang`` executable is not a python command: nothing is injected into it (upstream HEAD)."""
    pattern = re.compile(r"(python[0-9.]*\s+[^|&;]*" + re.escape(framework) + r"[^|&;]*?)(\s|\Z|[|&;])")
    return pattern.sub(lambda m: f"{m.group(1).strip()} {flags}{m.group(2)}", text)


def inject_flags(container: dict[str, Any], flags: str, needs_shell: bool, framework: str) -> None:
    """Add ``flags`` (space-separated) to the container's launch command in place."""
    command = list(container.get("command") or [])
    args = list(container.get("args") or [])
    if command and is_python_command(command[0]):
        if needs_shell:
            parts = ["exec", quoted_line(command)]
            if args:
                parts.append(quoted_line(args))
            parts.append(flags)
            container["command"] = ["sh", "-c"]
            container["args"] = [" ".join(parts)]
        else:
            container["args"] = [*args, *flags.split()]
        return
    for index, arg in enumerate(args):
        changed = insert_after_module(arg, framework, flags)
        if changed != arg:
            args[index] = changed
            container["args"] = args
            return
