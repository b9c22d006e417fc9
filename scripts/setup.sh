#!/usr/bin/env bash
# Create the project's Python environment (.venv in the repo root) and install
# the package with its test extra in editable mode.
#
#   scripts/setup.sh
#
# Environment:
#   PYTHON   interpreter used to create .venv when it does not exist yet
#            (default: the first of python3.13, python3.12, python3.11, python3
#            that is >= 3.11).
set -euo pipefail

MIN_PYTHON="3.11"

die() { echo "setup.sh: error: $*" >&2; exit 1; }
step() { echo "==> setup: $*"; }

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
venv="$repo_root/.venv"

# python_ok PY: true when PY runs and is >= MIN_PYTHON.
python_ok() {
    "$1" -c "import sys; sys.exit(0 if sys.version_info >= tuple(int(p) for p in '$MIN_PYTHON'.split('.')) else 1)" \
        >/dev/null 2>&1
}

if [[ ! -x "$venv/bin/python" ]]; then
    py=""
    if [[ -n "${PYTHON:-}" ]]; then
        python_ok "$PYTHON" || die "PYTHON=$PYTHON is not a working Python >= $MIN_PYTHON"
        py="$PYTHON"
    else
        for cand in python3.13 python3.12 python3.11 python3; do
            if command -v "$cand" >/dev/null 2>&1 && python_ok "$cand"; then
                py="$cand"
                break
            fi
        done
        [[ -n "$py" ]] || die "no Python >= $MIN_PYTHON found on PATH (install python3 >= $MIN_PYTHON, or set PYTHON=/path/to/python3)"
    fi
    step "creating $venv with $(command -v "$py") ($("$py" -c 'import platform; print(platform.python_version())'))"
    "$py" -m venv "$venv" || die "'$py -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)"
else
    python_ok "$venv/bin/python" \
        || die "$venv exists but its python is broken or older than $MIN_PYTHON; remove it (rm -rf .venv) and re-run"
    step "using existing $venv ($("$venv/bin/python" -c 'import platform; print(platform.python_version())'))"
fi

step "installing the package with its tooling and test extras: pip install -e '.[tooling,test]'"
# The runtime dependencies at the versions the image ships (requirements.lock, hashes dropped).
constraints="$venv/constraints.txt"
sed -e '/^#/d' -e 's/ --hash=.*//' requirements.lock >"$constraints"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -c "$constraints" -e '.[tooling,test]' \
    || die "pip install -e '.[tooling,test]' failed (see the pip output above)"

step "done: $venv/bin/python"
