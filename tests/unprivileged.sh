#!/usr/bin/env bash
# The sandbox and attack tests again, with the harness run by an ordinary user (make test does this
# when it runs as root). The project's venv lives under /root here, which other users cannot reach,
# so the user gets its own copy of the tracked files and a small venv on the system Python.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
user="${SCIBENCH_TEST_USER:-scibench-test}"
python="${SCIBENCH_TEST_PYTHON:-/usr/bin/python3}"
home="/var/tmp/scibench-unprivileged"

if [ "$(id -u)" != 0 ]; then echo "unprivileged.sh: run as root (it creates the test user)"; exit 2; fi
id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --home-dir "$home" --shell /bin/sh "$user"
rm -rf "$home/project"
mkdir -p "$home/project"
git -C "$root" ls-files -z --cached | (cd "$root" && xargs -0 cp --parents -t "$home/project" 2>/dev/null || true)
chown -R "$user:" "$home"
as_user() { setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups \
    env -i HOME="$home" PATH=/usr/bin:/bin PYTHONPATH="$home/project" "$@"; }
if [ ! -x "$home/venv/bin/pytest" ]; then
    as_user "$python" -m venv "$home/venv"
    as_user "$home/venv/bin/pip" install -q --disable-pip-version-check "pydantic>=2.7" "pyyaml>=6" "pytest>=8"
fi
cd "$home/project"
as_user "$home/venv/bin/pytest" -q -p no:cacheprovider -o addopts="--import-mode=importlib" \
    tests/sandbox tests/adversarial "$@"
