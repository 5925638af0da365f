#!/usr/bin/env bash
# Starts a Docker engine for the container tests when none answers: Debian's dockerd, with no
# bridge and no iptables rules (the tests run their containers with --network none), logging
# to /var/log/fabuild-dockerd.log. Waits until it answers. Needs root; does nothing otherwise.
set -euo pipefail
docker info >/dev/null 2>&1 && { echo "start-docker: engine already running"; exit 0; }
if [ "$(id -u)" -ne 0 ]; then
  echo "start-docker: no engine answers and this is not root; the container tests will say so"
  exit 0
fi
command -v dockerd >/dev/null || { echo "start-docker: dockerd is not installed (apt-get install docker.io)" >&2; exit 1; }
# A machine booted without an init system may have no cgroup hierarchies mounted.
if ! grep -q cgroup2 /proc/mounts && [ ! -d /sys/fs/cgroup/memory ] && command -v cgroupfs-mount >/dev/null; then
  cgroupfs-mount
fi
setsid dockerd --bridge=none --iptables=false >/var/log/fabuild-dockerd.log 2>&1 < /dev/null &
for _ in $(seq 1 60); do
  docker info >/dev/null 2>&1 && { echo "start-docker: engine running"; exit 0; }
  sleep 1
done
echo "start-docker: dockerd did not answer within 60s; see /var/log/fabuild-dockerd.log" >&2
tail -20 /var/log/fabuild-dockerd.log >&2
exit 1
