#!/usr/bin/env bash
# Proves the staging modules can be imported as published: it publishes
# them (hack/publish-modules.sh) into a file module proxy, then, in a fresh
# module outside the repository with GOWORK=off and an empty module cache,
# `go get`s every one at staging/VERSION, checks that the build list holds
# each at that version with no replacement, and runs every module's own
# tests, examples included, from the module cache. Nothing comes from the
# tree but the proxy; third-party modules come from the local module
# cache's download directory (a proxy too), then the usual GOPROXY. The
# seeded go.sum is the staging modules' own, so no checksum database is
# consulted for them; the nodeagent modules are not in it (GONOSUMDB).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
version=$(tr -d '[:space:]' <"$root/staging/VERSION")
prefix=$(cd "$root" && GOWORK=off go list -m -f '{{.Path}}')/staging
cachedl=$(go env GOMODCACHE)/cache/download
usual=$(go env GOPROXY)

work=$(mktemp -d)
cleanup() {
  [[ -d $work/modcache ]] && GOMODCACHE=$work/modcache go clean -modcache
  rm -rf "$work"
}
trap cleanup EXIT

"$root/hack/publish-modules.sh" "$work/proxy" "$version"

mkdir "$work/importer"
cd "$work/importer"
cat >go.mod <<EOM
module example.com/importer

go $(cd "$root" && go mod edit -json | python3 -c 'import json,sys; print(json.load(sys.stdin)["Go"])')
EOM
for mod in $(staging_modules "$root"); do
  cat "$root/$mod/go.sum"
done | sort -u >go.sum

export GOWORK=off GOMODCACHE=$work/modcache GOFLAGS=-mod=mod
export GOPROXY="file://$work/proxy,file://$cachedl,$usual" GONOSUMDB="$prefix/*"

failed=0
names=()
for mod in $(staging_modules "$root"); do
  names+=("${mod#staging/}")
done
for name in "${names[@]}"; do
  go get "$prefix/$name@$version"
done
for name in "${names[@]}"; do
  got=$(go list -m -f '{{.Version}} {{with .Replace}}replaced by {{.Path}}{{end}}' "$prefix/$name")
  if [[ $got != "$version " ]]; then
    echo "FAIL: $prefix/$name: selected '$got', want $version with no replacement" >&2
    failed=1
  fi
  dir=$(go list -m -f '{{.Dir}}' "$prefix/$name")
  if [[ $dir != "$GOMODCACHE/"* ]]; then
    echo "FAIL: $prefix/$name comes from $dir, not the module cache" >&2
    failed=1
  fi
done
# -trimpath and CGO_ENABLED=0, as hack/build.sh builds the binaries: the
# packages' build cache keys then do not name the fresh module cache, so
# the dependencies the binaries share are not compiled again (make test
# runs this after the integration tests for that), nor by a second run.
log "test-modules: go test of ${names[*]} at $version from the module cache"
patterns=()
for name in "${names[@]}"; do
  patterns+=("$prefix/$name/...")
done
CGO_ENABLED=0 go test -trimpath -count=1 "${patterns[@]}" || failed=1
if ((failed)); then
  exit 1
fi
log "test-modules: ok"
