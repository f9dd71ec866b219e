#!/usr/bin/env bash
# Makes (once) a virtualenv with pyatv for the AirPlay interop tests and prints the path of its atvremote.
#
#   Tests/Fixtures/pyatv_venv.sh [DIR]      (default /var/cache/cast-test/pyatv-venv, or $CAST_PYATV_VENV)
#
# The version is pinned: the AirPlay tests rely on how pyatv 0.18.0 builds its requests (see docs/protocol.md).
# A half-made venv (an install that failed) is removed and made again on the next call. Needs python3-venv
# (scripts/setup installs it) and PyPI through pip.
set -euo pipefail
VERSION=0.18.0
DIR=${1:-${CAST_PYATV_VENV:-/var/cache/cast-test/pyatv-venv}}
if [[ -x $DIR/bin/atvremote && -f $DIR/.pyatv-$VERSION ]]; then
    echo "$DIR/bin/atvremote"
    exit 0
fi
# One maker at a time (two test processes may ask at once).
mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
flock 9
if [[ -x $DIR/bin/atvremote && -f $DIR/.pyatv-$VERSION ]]; then
    echo "$DIR/bin/atvremote"
    exit 0
fi
rm -rf "$DIR"
python3 -m venv "$DIR" >&2
"$DIR/bin/pip" install --quiet --disable-pip-version-check "pyatv==$VERSION" >&2
touch "$DIR/.pyatv-$VERSION"
echo "$DIR/bin/atvremote"
