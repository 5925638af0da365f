#!/usr/bin/env bash
# Uploads the wheels of a wheelhouse to a GitHub release with the gh CLI, never replacing one.
# Usage: scripts/ci/publish-release.sh TAG WHEELHOUSE
# Needs GH_TOKEN (contents: write) and GITHUB_REPOSITORY (owner/name), as in a workflow.
#
# The release is created if it is missing. A wheel already there with the same sha256 is
# skipped; one already there with a different sha256 is a conflict: every conflict is listed
# (name, both digests) and nothing is uploaded (exit 1). Assets without a digest from the API
# are downloaded and hashed. Release assets are flat, so two wheels of one name in different
# directories are refused too. Exit 0 when every wheel is on the release.
set -euo pipefail
tag=${1:?usage: publish-release.sh TAG WHEELHOUSE}
dir=${2:?usage: publish-release.sh TAG WHEELHOUSE}
repo=${GITHUB_REPOSITORY:?GITHUB_REPOSITORY=owner/name must be set}
say() { echo "publish-release: $*"; }
fail() { echo "publish-release: error: $*" >&2; exit "${2:-1}"; }
[ -d "$dir" ] || fail "$dir is not a directory" 2

mapfile -d '' wheels < <(find "$dir" -path "$dir/logs" -prune -o -name '.*' -prune -o -type f -name '*.whl' -print0 | sort -z)
[ ${#wheels[@]} -gt 0 ] || { say "no wheel under $dir: nothing to upload"; exit 0; }
declare -A local_sha local_path
for w in "${wheels[@]}"; do
  name=$(basename "$w")
  [ -z "${local_path[$name]+x}" ] || fail "two wheels named $name: ${local_path[$name]} and $w (release assets are flat)"
  local_path[$name]=$w
  local_sha[$name]=$(sha256sum "$w" | cut -d' ' -f1)
done

if ! gh release view "$tag" --repo "$repo" >/dev/null 2>&1; then
  say "creating release $tag"
  gh release create "$tag" --repo "$repo" --title "$tag" --notes "Wheels built by fabuild; each wheelhouse directory's SHA256SUMS is on the index page."
fi
release_id=$(gh api "repos/$repo/releases/tags/$tag" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')

# name <TAB> digest ("sha256:<hex>", or "none" for an asset uploaded before GitHub kept
# digests) <TAB> asset id, for every asset of the release. (A tab is whitespace to `read`:
# an empty field would vanish, hence "none".)
assets=$(gh api --paginate "repos/$repo/releases/$release_id/assets?per_page=100" | python3 -c '
import json, sys
text = sys.stdin.read()
decoder, pos, items = json.JSONDecoder(), 0, []
while pos < len(text):  # --paginate prints one JSON array per page
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos == len(text):
        break
    page, pos = decoder.raw_decode(text, pos)
    items += page
for a in items:
    print("{}\t{}\t{}".format(a["name"], a.get("digest") or "none", a["id"]))
')

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A remote_sha
while IFS=$'\t' read -r name digest id; do
  [ -n "$name" ] || continue
  [ -n "${local_sha[$name]+x}" ] || continue
  if [ "$digest" = none ]; then
    gh api -H "Accept: application/octet-stream" "repos/$repo/releases/assets/$id" > "$tmp/asset"
    digest="sha256:$(sha256sum "$tmp/asset" | cut -d' ' -f1)"
  fi
  remote_sha[$name]=${digest#sha256:}
done <<< "$assets"

upload=()
conflicts=0
skipped=0
for name in "${!local_path[@]}"; do
  if [ -z "${remote_sha[$name]+x}" ]; then
    upload+=("${local_path[$name]}")
  elif [ "${remote_sha[$name]}" = "${local_sha[$name]}" ]; then
    skipped=$((skipped + 1))
  else
    echo "publish-release: conflict: $name" >&2
    echo "    on release $tag: sha256 ${remote_sha[$name]}" >&2
    echo "    ${local_path[$name]}: sha256 ${local_sha[$name]}" >&2
    conflicts=$((conflicts + 1))
  fi
done
if [ $conflicts -gt 0 ]; then
  fail "$conflicts wheel(s) on release $tag differ from the ones built now; nothing was uploaded. A release asset is never replaced: publish to another tag, or delete the asset on purpose first"
fi
say "$skipped wheel(s) already on $tag with the same sha256, ${#upload[@]} to upload"
if [ ${#upload[@]} -gt 0 ]; then
  mapfile -t upload < <(printf '%s\n' "${upload[@]}" | sort)
  gh release upload "$tag" --repo "$repo" "${upload[@]}"
fi
say "done: ${#local_path[@]} wheel(s) on release $tag"
