#!/usr/bin/env bash
# Uploads the wheels of a wheelhouse to a GitHub release with the gh CLI, each with its build
# record (<wheel>.build.json, docs/security.md), and one SHA256SUMS for the release; never
# replaces a wheel or a record.
# Usage: scripts/ci/publish-release.sh TAG WHEELHOUSE
# Needs GH_TOKEN (contents: write) and GITHUB_REPOSITORY (owner/name), as in a workflow.
#
# The release is created if it is missing. A wheel already there with the same sha256 is
# skipped; one already there with a different sha256 is a conflict: every conflict is listed
# (name, both digests) and nothing is uploaded (exit 1). A wheel's build record goes up with
# the wheel; a wheel already on the release keeps the record there (the run that made those
# bytes; a record names its CI run, so another run's differs) and gets this one only when it
# has none. Assets without a digest from the API are downloaded and hashed. Release assets are
# flat, so two wheels of one name in different directories are refused too. Last, SHA256SUMS
# lists every wheel and record on the release with its digest there, the lines of the
# release's earlier SHA256SUMS kept (`sha256sum -c SHA256SUMS` where the assets were
# downloaded checks them); it is the one asset written again (--clobber), when the release
# grows. Exit 0 when every wheel is on the release.
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
names=()  # the wheels'
for w in "${wheels[@]}"; do
  name=$(basename "$w")
  [ -z "${local_path[$name]+x}" ] || fail "two wheels named $name: ${local_path[$name]} and $w (release assets are flat)"
  names+=("$name")
  local_path[$name]=$w
  local_sha[$name]=$(sha256sum "$w" | cut -d' ' -f1)
  if [ -f "$w.build.json" ]; then
    local_path[$name.build.json]=$w.build.json
    local_sha[$name.build.json]=$(sha256sum "$w.build.json" | cut -d' ' -f1)
  fi
done

if ! gh release view "$tag" --repo "$repo" >/dev/null 2>&1; then
  say "creating release $tag"
  gh release create "$tag" --repo "$repo" --title "$tag" --notes "Wheels built by fabuild, each with its build record (<wheel>.build.json); SHA256SUMS lists them all."
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
sums_id=
while IFS=$'\t' read -r name digest id; do
  [ -n "$name" ] || continue
  [ "$name" != SHA256SUMS ] || sums_id=$id
  [ -n "${local_sha[$name]+x}" ] || continue
  if [ "$digest" = none ]; then
    gh api -H "Accept: application/octet-stream" "repos/$repo/releases/assets/$id" > "$tmp/asset"
    digest="sha256:$(sha256sum "$tmp/asset" | cut -d' ' -f1)"
  fi
  remote_sha[$name]=${digest#sha256:}
done <<< "$assets"

upload=()
declare -A final_sha  # name -> its digest on the release once this run is done
conflicts=0
skipped=0
records=0
conflict() {  # NAME RELEASE_SHA
  echo "publish-release: conflict: $1" >&2
  echo "    on release $tag: sha256 $2" >&2
  echo "    ${local_path[$1]}: sha256 ${local_sha[$1]}" >&2
  conflicts=$((conflicts + 1))
}
for name in "${names[@]}"; do
  record=$name.build.json
  if [ -z "${remote_sha[$name]+x}" ]; then
    upload+=("${local_path[$name]}")
    final_sha[$name]=${local_sha[$name]}
    if [ -n "${local_sha[$record]+x}" ]; then
      if [ -z "${remote_sha[$record]+x}" ]; then
        upload+=("${local_path[$record]}")
        records=$((records + 1))
      elif [ "${remote_sha[$record]}" != "${local_sha[$record]}" ]; then
        conflict "$record" "${remote_sha[$record]}"  # a record of a wheel the release does not have
      fi
      final_sha[$record]=${local_sha[$record]}
    fi
  elif [ "${remote_sha[$name]}" = "${local_sha[$name]}" ]; then
    skipped=$((skipped + 1))
    final_sha[$name]=${local_sha[$name]}
    if [ -n "${remote_sha[$record]+x}" ]; then
      final_sha[$record]=${remote_sha[$record]}  # the record of the run that uploaded the wheel
    elif [ -n "${local_sha[$record]+x}" ]; then
      upload+=("${local_path[$record]}")
      records=$((records + 1))
      final_sha[$record]=${local_sha[$record]}
    fi
  else
    conflict "$name" "${remote_sha[$name]}"
  fi
done
if [ $conflicts -gt 0 ]; then
  fail "$conflicts wheel(s) on release $tag differ from the ones built now; nothing was uploaded. A release asset is never replaced: publish to another tag, or delete the asset on purpose first"
fi
say "$skipped wheel(s) already on $tag with the same sha256, $(( ${#upload[@]} - records )) to upload"
say "$records build record(s) to upload beside them"
if [ ${#upload[@]} -gt 0 ]; then
  mapfile -t upload < <(printf '%s\n' "${upload[@]}" | sort)
  gh release upload "$tag" --repo "$repo" "${upload[@]}"
fi

# The release's SHA256SUMS: its earlier lines, then every wheel and record of this run as the
# release now has them.
declare -A sums
: > "$tmp/old-sums"
if [ -n "$sums_id" ]; then
  gh api -H "Accept: application/octet-stream" "repos/$repo/releases/assets/$sums_id" > "$tmp/old-sums"
  while read -r digest name; do
    [ -n "$name" ] && sums[${name#\*}]=$digest
  done < "$tmp/old-sums"
fi
for name in "${!final_sha[@]}"; do sums[$name]=${final_sha[$name]}; done
mkdir "$tmp/sums"
for name in "${!sums[@]}"; do printf '%s  %s\n' "${sums[$name]}" "$name"; done | LC_ALL=C sort -k2,2 > "$tmp/sums/SHA256SUMS"
if [ -n "$sums_id" ] && cmp -s "$tmp/sums/SHA256SUMS" "$tmp/old-sums"; then
  say "SHA256SUMS on $tag already lists them"
else
  gh release upload "$tag" --repo "$repo" --clobber "$tmp/sums/SHA256SUMS"
  say "SHA256SUMS on $tag lists ${#sums[@]} file(s)"
fi
say "done: ${#names[@]} wheel(s) on release $tag"
