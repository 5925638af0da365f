#!/usr/bin/env bash
# End to end on a real Docker engine: fabuild, run as an unprivileged user, builds the example
# package (examples/flash_example, a torch CUDA extension) in a container of an image made
# offline (tests/container/make-test-image.sh), with the host's CUDA toolkit mounted read-only
# and torch installed from a staged wheel directory with --network none. It checks:
#   - the first image candidate is missing (its pull fails) and the fallback builds the wheel;
#     the manifest records the image and its id;
#   - every file fabuild or the container wrote belongs to the invoking user;
#   - a second run rebuilds nothing;
#   - Ctrl-C in the middle of a build: exit 130, no container left, the filed wheel intact;
#   - a container left by a killed fabuild is removed by the next run;
#   - a cell that times out: TIMEOUT, no container left, the filed wheel intact;
#   - no image at all: the cell fails at once saying what was tried.
# Needs root (to make the user), a running engine (scripts/start-docker.sh), debootstrap, the
# CUDA 13.0 toolkit and pip's index once (torch wheels, kept in $FABUILD_TEST_CACHE).
# FABUILD_SKIP_CONTAINER=1 skips it (exit 77).
set -euo pipefail
[ "${FABUILD_SKIP_CONTAINER:-}" = 1 ] && { echo "skipped: FABUILD_SKIP_CONTAINER=1"; exit 77; }
fabuild=${1:?usage: container_build.sh FABUILD SOURCE_DIR}
src=${2:?}
fail() { echo "container e2e: FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root: it runs fabuild as an unprivileged user to check file ownership"
docker info >/dev/null 2>&1 || fail "no Docker engine answers; start one with scripts/start-docker.sh"

export FABUILD_TEST_CACHE=${FABUILD_TEST_CACHE:-/var/cache/fabuild-test}
mkdir -p "$FABUILD_TEST_CACHE" && chmod 755 "$FABUILD_TEST_CACHE"
image=$("$src/tests/container/make-test-image.sh")
wheels=$FABUILD_TEST_CACHE/wheels-cp311
"$src/tests/container/stage-wheels.sh" "$wheels"

user=fabuild-ci
if ! id -u "$user" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/bash "$user"
fi
usermod -aG docker "$user"
uid=$(id -u "$user")
user_cache=$FABUILD_TEST_CACHE/cache-$user  # its venvs: kept between runs
mkdir -p "$user_cache" && chown "$user:" "$user_cache"

work=$(mktemp -d /tmp/fabuild-container.XXXXXX)
cleanup() {
  docker ps -aq --filter "label=fabuild.host=$(hostname)" | xargs -r docker rm -f >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"
install -m 755 "$fabuild" "$work/fabuild"
cp -r "$src/examples/flash_example" "$work/src"
rm -rf "$work/src/build" "$work/src/dist" "$work/src"/*.egg-info
chown -R "$user:" "$work"
cd "$work"

cell=example0.1.0-torch2.11-cu130-cp311-linux_x86_64
dir=wh/example0.1.0/torch2.11/cu130
matrix() {  # matrix FILE IMAGES [EXTRA BUILD KEYS]
  cat > "$1" <<EOF
package: flash-example
versions: ["0.1.0"]
torch: ["2.11"]
cuda: ["13.0"]
python: [cp311]
archs: "90"
provision: container
container:
  images: [$2]
  python: /usr/bin/python{python_version}
  toolkit: host
  network: none
source: {path: src}
torch_index: $wheels
build: {nvcc_threads: 1${3:+, $3}}
EOF
  chown "$user:" "$1"
}
as_user() { setpriv --reuid="$user" --regid="$user" --init-groups env HOME="/home/$user" FABUILD_CACHE_DIR="$user_cache" "$@"; }
containers_left() { docker ps -aq --filter "label=fabuild.cell=$cell"; }
foreign_files() { find "$work/wh" "$work/src" "$user_cache" ! -uid "$uid" -print | head -5; }  # what fabuild and its containers wrote

echo "== build in a container; the first image is missing, the second builds"
matrix m.yaml "\"127.0.0.1:9/fabuild-test/absent:1\", \"$image\""
start=$(date +%s)
as_user ./fabuild m.yaml -o wh | tee first.log || fail "first run exited $?"
echo "first run: $(( $(date +%s) - start ))s"
wheel=$dir/flash_example-0.1.0+cu130torch2.11cxx11abiTRUE-cp311-cp311-linux_x86_64.whl
[ -f "$wheel" ] || fail "no $wheel"
(cd "$dir" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS does not match"
grep -q "CUDA 13.0: image $image (.*after 127.0.0.1:9/fabuild-test/absent:1: not present; pull failed" first.log ||
  fail "the plan does not say which image was chosen after the missing one"
python3 - wh/manifest.json "$image" "$(docker image inspect --format '{{.Id}}' "$image")" <<'PY' || fail "manifest.json"
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
c = cells["example0.1.0-torch2.11-cu130-cp311-linux_x86_64"]
assert c["image"] == {"name": sys.argv[2], "id": sys.argv[3]}, c["image"]
assert c["versions"]["torch"].startswith("2.11"), c
assert c["versions"]["nvcc"] == "13.0", c
assert "12." in c["versions"]["compiler"], c  # the image's g++ 12, not the host's
print("manifest: built in", c["image"]["name"], c["image"]["id"][:19])
PY
grep -q "fabuild: imported" "wh/logs/$cell.log" || fail "no import smoke test in the log"
[ -z "$(containers_left)" ] || fail "containers left: $(containers_left)"
[ -z "$(foreign_files)" ] || fail "files not owned by $user: $(foreign_files)"
echo "ownership: every file under the wheelhouse and the cache belongs to $user (uid $uid)"

echo "== a second run rebuilds nothing"
as_user ./fabuild m.yaml -o wh | tee second.log || fail "second run exited $?"
grep -q "1 up to date" second.log || fail "the second run built something"
sum=$(sha256sum "$wheel")

echo "== a container left by a fabuild that was killed is removed by the next run"
dead_pid=$(sh -c 'echo $$')  # a process that has exited
docker run --detach --name "fabuild-deadbeef-$cell" --label "fabuild.host=$(hostname)" --label "fabuild.pid=$dead_pid" \
  --label "fabuild.cell=orphan" --entrypoint sleep "$image" infinity >/dev/null
echo "== Ctrl-C in the middle of a build"
setpriv --reuid="$user" --regid="$user" --init-groups env HOME="/home/$user" FABUILD_CACHE_DIR="$user_cache" \
  ./fabuild m.yaml -o wh --force --no-cache > int.log 2>&1 &  # no cache: a full compile to interrupt
pid=$!
for _ in $(seq 1 600); do
  grep -q "fabuild: step build" "wh/logs/$cell.log" 2>/dev/null && [ -n "$(containers_left)" ] && break
  sleep 0.5
done
grep -q "fabuild: step build" "wh/logs/$cell.log" || fail "the build step never started"
sleep 5
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
cat int.log
[ "$rc" -eq 130 ] || fail "Ctrl-C: exit $rc, expected 130"
grep -q "removed 1 container left by a fabuild that was killed: fabuild-deadbeef-$cell" int.log ||
  fail "the orphan container was not reported as removed"
[ -z "$(docker ps -aq --filter label=fabuild.cell=orphan)" ] || fail "the orphan container is still there"
[ -z "$(containers_left)" ] || fail "Ctrl-C left containers: $(docker ps -a --filter "label=fabuild.cell=$cell")"
[ ! -e wh/.staging ] || fail "Ctrl-C left wh/.staging"
[ "$(sha256sum "$wheel")" = "$sum" ] || fail "the filed wheel changed"
(cd "$dir" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS after Ctrl-C"
[ -z "$(foreign_files)" ] || fail "files not owned by $user after Ctrl-C: $(foreign_files)"
echo "Ctrl-C: exit 130, no container, filed wheel intact"

echo "== a cell that times out"
matrix t.yaml "\"$image\"" "timeout: 25s, kill_grace: 2s"
rc=0; as_user ./fabuild t.yaml -o wh --force --no-cache | tee timeout.log || rc=$?
[ "$rc" -eq 1 ] || fail "timeout: exit $rc, expected 1"
grep -q "TIMEOUT" timeout.log || fail "the cell did not time out"
[ -z "$(containers_left)" ] || fail "the timed-out cell left containers"
[ "$(sha256sum "$wheel")" = "$sum" ] || fail "the filed wheel changed"
echo "timeout: TIMEOUT, no container, filed wheel intact"

echo "== no image at all"
matrix n.yaml "\"127.0.0.1:9/fabuild-test/absent:1\""
rc=0; as_user ./fabuild n.yaml -o wh2 | tee none.log || rc=$?
[ "$rc" -eq 1 ] || fail "no image: exit $rc, expected 1"
grep -q "no amd64 image for CUDA 13.0 (tried 127.0.0.1:9/fabuild-test/absent:1: not present; pull failed" none.log ||
  fail "no word about the missing image"
[ -z "$(foreign_files)" ] || fail "files not owned by $user: $(foreign_files)"
echo "container e2e: ok"
