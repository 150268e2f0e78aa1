#!/usr/bin/env bash
# Proves that verify-deps.sh fails on each kind of broken dependency rule:
# it plants one bad import at a time in a copy of the tree and expects the
# matching complaint. The repository itself is never touched.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
modpath=$(cd "$root" && GOWORK=off go list -m -f '{{.Path}}')

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect_violation DIR IMPORT RULE_TEXT: a file in DIR importing IMPORT must
# make verify-deps fail with a message containing RULE_TEXT.
expect_violation() {
  local dir=$1 imp=$2 want=$3 tree="$work/tree" out
  rm -rf "$tree"
  mkdir -p "$tree"
  (cd "$root" && tar --exclude=.git -cf - .) | tar -xf - -C "$tree"
  mkdir -p "$tree/$dir"
  printf 'package %s\n\nimport _ "%s"\n' "$(basename "$dir")" "$imp" >"$tree/$dir/zz_probe.go"
  if out=$("$root/hack/verify-deps.sh" "$tree" 2>&1); then
    echo "FAIL: $dir importing $imp passed verify-deps"
    failures=$((failures + 1))
  elif ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL: $dir importing $imp: output lacks '$want':"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok: $dir importing $imp is refused"
  fi
}

expect_violation staging/podtypes go.etcd.io/bbolt "only internal/checkpoint imports go.etcd.io/bbolt"
expect_violation staging/mirror "$modpath/internal/runtime" "staging modules never import the root module or internal/"
expect_violation staging/mirror k8s.io/cri-api/pkg/apis/runtime/v1 "only internal/runtime imports k8s.io/cri-api"
expect_violation staging/podtypes k8s.io/client-go/kubernetes "podtypes may import only"
expect_violation staging/podmanager "$modpath/staging/mirror" "podmanager may import only"
expect_violation staging/manifest "$modpath/staging/config" "manifest may import only"
expect_violation internal/agent k8s.io/cri-api/pkg/apis/runtime/v1 "only internal/runtime imports k8s.io/cri-api"

if ((failures > 0)); then
  exit 1
fi
