#!/usr/bin/env bash
# A one-node OpenStack Swift with its S3 API (s3api) on loopback, for the tests only:
#   .ci/swift/start.sh ROOT PROXY_PORT OBJECT_PORT CONTAINER_PORT ACCOUNT_PORT [PARENT_PID]
# ROOT is an empty scratch directory (configs, rings, the "disk", logs). Runs in the
# foreground until SIGTERM/SIGINT, or until PARENT_PID is gone, then stops its servers.
# Needs Debian's swift packages (swift, swift-proxy, swift-object, swift-container,
# swift-account: .ci/run installs them) and Debian's /usr/bin/python3, which their compiled
# modules are built for — not another python3 that may come first on PATH.
# S3 endpoint: http://127.0.0.1:PROXY_PORT, access key "test:tester", secret "testing",
# region us-east-1, path-style.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
[ $# -ge 5 ] || { echo "usage: $0 ROOT PROXY_PORT OBJECT_PORT CONTAINER_PORT ACCOUNT_PORT [PARENT_PID]" >&2; exit 2; }
root="$1" proxy_port="$2" parent="${6:-}"
py=/usr/bin/python3
unset PYTHONPATH PYTHONHOME  # Debian's python with its own modules only
bindir=/usr/bin
for s in proxy object container account; do
  [ -x "$bindir/swift-$s-server" ] || { echo "swift-$s-server is not installed (Debian package swift-$s)" >&2; exit 3; }
done
[ -x "$py" ] || { echo "$py is missing" >&2; exit 3; }
user="$(id -un)"
mkdir -p "$root/etc" "$root/srv/sdb1" "$root/log"
cp "$here/swift.conf" "$root/etc/swift.conf"
fill() { sed -e "s|@ROOT@|$root|g" -e "s|@USER@|$user|g" -e "s|@PORT@|$2|g" -e "s|@NAME@|$3|g" "$1"; }
fill "$here/proxy-server.conf.in" "$proxy_port" proxy > "$root/etc/proxy-server.conf"
export SWIFT_CONF_FILE="$root/etc/swift.conf"
i=3
for name in object container account; do
  fill "$here/backend-server.conf.in" "${!i}" "$name" > "$root/etc/$name-server.conf"
  i=$((i + 1))
done
"$py" "$here/rings.py" "$root/etc" "$3" "$4" "$5"
for name in object container account; do
  [ -f "$root/etc/$name.ring.gz" ] || { echo "could not build the $name ring" >&2; exit 4; }
done
pids=()
stop() { trap - TERM INT EXIT; [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap 'stop; exit 0' TERM INT
trap stop EXIT
for name in account container object proxy; do
  "$py" "$here/launch.py" "$bindir/swift-$name-server" "$root/etc/$name-server.conf" > "$root/log/$name.log" 2>&1 &
  pids+=($!)
done
echo "swift started: proxy 127.0.0.1:$proxy_port (logs in $root/log)"
while :; do
  for p in "${pids[@]}"; do
    kill -0 "$p" 2>/dev/null || { echo "a swift server exited; see $root/log" >&2; exit 5; }
  done
  if [ -n "$parent" ] && ! kill -0 "$parent" 2>/dev/null; then exit 0; fi
  sleep 1 & wait $! || true
done
