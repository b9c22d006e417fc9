#!/usr/bin/env bash
# Builds the Python distributions into OUT_DIR: the sdist, then the wheel from that sdist, so the wheel holds only
# what the sdist carries (functions/, plus the XRDs and Compositions scripts/wheel_data.py copies in). Both are
# built offline by PYTHON's setuptools, which must be the version pyproject.toml pins; file times are the last
# commit's (or SOURCE_DATE_EPOCH's). Prints the two files' paths.
# Usage: scripts/build-dist.sh OUT_DIR        PYTHON: default .venv/bin/python (scripts/setup.sh makes it)
set -euo pipefail
die() { echo "build-dist.sh: error: $*" >&2; exit 1; }

out=${1:?usage: build-dist.sh OUT_DIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
[[ -x "$python" ]] || die "no Python at $python: run scripts/setup.sh, or set PYTHON"

pinned=$(sed -n 's/^requires = \["setuptools==\([^"]*\)"\]$/\1/p' "$root/pyproject.toml")
[[ -n "$pinned" ]] || die "pyproject.toml's build-system pins no setuptools version"
have=$("$python" -c 'import setuptools; print(setuptools.__version__)' 2>/dev/null) ||
    die "$python has no setuptools: $python -m pip install setuptools==$pinned"
[[ "$have" == "$pinned" ]] ||
    die "$python has setuptools $have; pyproject.toml pins $pinned: $python -m pip install setuptools==$pinned"
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || true)}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-315532800}  # 1980-01-01, the earliest time a wheel (zip) holds

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && "$python" -c 'import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])' \
    "$work/sdist") >"$work/sdist.log" 2>&1 || { cat "$work/sdist.log" >&2; die "building the sdist failed"; }
sdists=("$work"/sdist/function_dynamo-*.tar.gz)
[[ -f "${sdists[0]}" ]] || die "the sdist build wrote no function_dynamo-*.tar.gz"
"$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    -w "$work/wheel" "${sdists[0]}" >&2 || die "building the wheel from ${sdists[0]##*/} failed"
wheels=("$work"/wheel/function_dynamo-*.whl)
[[ -f "${wheels[0]}" ]] || die "pip wrote no function_dynamo-*.whl"
mv "${sdists[0]}" "${wheels[0]}" "$out/"
echo "$out/${sdists[0]##*/}"
echo "$out/${wheels[0]##*/}"
