#!/usr/bin/env bash
# Publishes every staging module at one version into a module proxy
# directory, the layout GOPROXY=file://DIR serves, so that a project outside
# this repository can `go get` them with no replace directive (see
# hack/publishmodules for what it writes and what it refuses).
#
# Usage: hack/publish-modules.sh DIR [VERSION]   (VERSION: staging/VERSION)
#
# The staging modules share one version, staging/VERSION, and require each
# other at it. Publishing it for real is tagging the commit
# staging/<name>/<version> for each module (the tag form the go command
# expects of a module in a subdirectory) and pushing the tags; this script
# makes the same modules without a remote, for the test and for a private
# proxy.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
if (($# < 1 || $# > 2)); then
  echo "usage: hack/publish-modules.sh DIR [VERSION]" >&2
  exit 2
fi
out=$1
version=${2:-$(tr -d '[:space:]' <"$root/staging/VERSION")}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
mods=()
for mod in $(staging_modules "$root"); do
  mods+=("$root/$mod")
done
go run ./hack/publishmodules -out "$out" -version "$version" "${mods[@]}"
log "published ${#mods[@]} staging modules at $version into $out (GOPROXY=file://$out)"
