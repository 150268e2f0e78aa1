#!/usr/bin/env bash
# Enforces the dependency rules of DESIGN.md on direct imports (tests
# included), reading the tree at $1 (default: this repository):
#   - staging modules never import the root module, internal/, cri-api or bbolt;
#   - podtypes imports only k8s.io/api and apimachinery; podmanager adds
#     podtypes; podworkers adds podtypes, a clock and a logger; manifest
#     adds podtypes and the YAML and JSON libraries, so that a tool that
#     only reads manifests never links client-go or the sources (tests of
#     strict modules may also use go-cmp, goleak and their own module);
#   - outside test/ (the integration tests, and the fake runtime of the
#     scale harness's hollow nodes), only internal/runtime imports k8s.io/cri-api
#     and only internal/checkpoint imports go.etcd.io/bbolt.
# Prints every violation as "package: imports X (rule)" and exits 1 if any.
# (The binary links client-go's clientset since connected mode: client-go's
# certificate manager and lease controller take one. Its scheme costs about
# 10 MiB of RSS, standalone too; see the README's figures.)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

root=${1:-$(repo_root)}
modpath=$(cd "$root" && GOWORK=off go list -m -f '{{.Path}}')

# imports_of lists "package import kind" triples (kind: prod or test) for
# every package of a module, resolving nothing: a broken import must still be
# reported, not hidden.
imports_of() {
  (cd "$root/$1" && GOWORK=off GOFLAGS=-mod=mod GOPROXY=off go list -e \
    -f '{{$p := .ImportPath}}{{range .Imports}}{{$p}} {{.}} prod{{"\n"}}{{end}}{{range .TestImports}}{{$p}} {{.}} test{{"\n"}}{{end}}{{range .XTestImports}}{{$p}} {{.}} test{{"\n"}}{{end}}' \
    ./... 2>/dev/null) | sort -u
}

is_std() { [[ $1 != *.* ]]; }

# allowed_prefixes names what a strict staging module may import beyond the
# standard library and itself; empty means the module is not strict.
allowed_prefixes() {
  case $1 in
    podtypes) echo "k8s.io/api/ k8s.io/apimachinery/" ;;
    podmanager) echo "k8s.io/api/ k8s.io/apimachinery/ $modpath/staging/podtypes" ;;
    podworkers) echo "k8s.io/api/ k8s.io/apimachinery/ $modpath/staging/podtypes k8s.io/utils/clock github.com/go-logr/logr" ;;
    manifest) echo "k8s.io/api/ k8s.io/apimachinery/ $modpath/staging/podtypes go.yaml.in/yaml/ sigs.k8s.io/json sigs.k8s.io/yaml" ;;
  esac
}

has_prefix() {
  local imp=$1; shift
  local p
  for p in "$@"; do
    [[ $imp == "$p" || $imp == "$p"* ]] && return 0
  done
  return 1
}

violations=0
violation() {
  echo "$1: imports $2 ($3)"
  violations=$((violations + 1))
}

while read -r mod; do
  case $mod in test/*) continue ;; esac
  name=${mod#staging/}
  strict=$(allowed_prefixes "$name")
  while read -r pkg imp kind; do
    [[ -z ${pkg:-} ]] && continue
    is_std "$imp" && continue
    if [[ $mod == staging/* ]]; then
      own="$modpath/$mod"
      [[ $imp == "$own" || $imp == "$own/"* ]] && continue
      if [[ $imp == "$modpath" || ( $imp == "$modpath/"* && $imp != "$modpath/staging/"* ) ]]; then
        violation "$pkg" "$imp" "staging modules never import the root module or internal/"
      fi
      test_only=""
      [[ $kind == test ]] && test_only="github.com/google/go-cmp/ go.uber.org/goleak"
      if [[ -n $strict ]] && ! has_prefix "$imp" $strict $test_only; then
        violation "$pkg" "$imp" "$name may import only: $strict"
      fi
    fi
    if [[ $imp == k8s.io/cri-api* && $pkg != "$modpath/internal/runtime"* && $pkg != "$modpath/test/"* ]]; then
      violation "$pkg" "$imp" "only internal/runtime imports k8s.io/cri-api"
    fi
    if [[ $imp == go.etcd.io/bbolt* && $pkg != "$modpath/internal/checkpoint"* ]]; then
      violation "$pkg" "$imp" "only internal/checkpoint imports go.etcd.io/bbolt"
    fi
  done < <(imports_of "$mod")
done < <(go_modules "$root")

if ((violations > 0)); then
  echo "verify-deps: $violations dependency rule violation(s)" >&2
  exit 1
fi
echo "verify-deps: ok"
