#!/usr/bin/env bash
# Every static check the tree must pass: formatting, vet, tidy modules, a
# go.work that uses every module, the dependency rules, and gosec.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/versions.sh"
root=$(repo_root)
cd "$root"
failed=0
fail() {
  echo "verify: $*" >&2
  failed=1
}

log "gofmt"
unformatted=$(find . -name '*.go' -not -path './.git/*' -print0 | xargs -0 -r gofmt -l)
[[ -z $unformatted ]] || fail "gofmt would change: $unformatted"

log "go.work uses every module"
used=$(go work edit -json | python3 -c 'import json,sys; print("\n".join(sorted(u["DiskPath"].removeprefix("./") for u in json.load(sys.stdin)["Use"])))')
while read -r mod; do
  grep -qx -- "$mod" <<<"$used" || fail "go.work does not use ./$mod (run: go work use ./$mod)"
done < <(go_modules "$root")
while read -r mod; do
  [[ -f $mod/go.mod ]] || fail "go.work uses ./$mod, which has no go.mod"
done <<<"$used"

tidydir=$(mktemp -d)
trap 'rm -rf "$tidydir"' EXIT
for mod in $(go_modules "$root"); do
  log "go vet + go mod tidy: $mod"
  if [[ -n $(cd "$mod" && go list ./... 2>/dev/null) ]]; then
    (cd "$mod" && go vet ./...) || fail "go vet failed in $mod"
  fi
  # Each module must be tidy on its own, as a downstream user builds it; a
  # staging module with its siblings from the tree (hack/lib.sh
  # staging_modfile), since the versions it requires are published from it.
  if [[ $mod == staging/* ]]; then
    modfile=$(staging_modfile "$root" "$mod" "$tidydir")
    (cd "$mod" && GOWORK=off go mod tidy -modfile="$modfile" -diff >/dev/null) ||
      fail "go mod tidy would change $mod/go.mod or go.sum (run: hack/tidy-staging.sh $mod)"
  else
    (cd "$mod" && GOWORK=off go mod tidy -diff >/dev/null) ||
      fail "go mod tidy would change $mod/go.mod or go.sum (run: cd $mod && GOWORK=off go mod tidy)"
  fi
done

log "import alias of k8s.io/api/core/v1 is corev1"
stray=$(grep -rlE --include='*.go' '^\s*(import\s+)?([A-Za-z_][A-Za-z0-9_]*\s+)?"k8s.io/api/core/v1"' . | xargs -r grep -LE '^\s*(import\s+)?corev1\s+"k8s.io/api/core/v1"' || true)
[[ -z $stray ]] || fail "import k8s.io/api/core/v1 as corev1 in: $stray"

log "dependency rules"
hack/verify-deps.sh >/dev/null || { hack/verify-deps.sh || true; fail "dependency rules broken"; }

log "verify-deps catches violations"
hack/verify-deps_test.sh || fail "hack/verify-deps_test.sh failed"

# gosec over the root module and every staging module (go.work covers them
# all from the root), production code only. No rule is disabled: a finding
# is fixed, or the line says why it is safe, with the rule it waives:
#   // #nosec G304 -- the path is the operator's own setting
# test/integration is left out: it is a test harness that runs the real
# parts as root (state files, hack/ scripts as subprocesses), not code that
# ships. About 30 s on 2 cores once built; the first build takes minutes.
log "gosec $GOSEC_VERSION"
go run "github.com/securego/gosec/v2/cmd/gosec@$GOSEC_VERSION" -quiet -nosec-require-rules -nosec-require-justification \
  -exclude-dir=test/integration ./... ||
  fail "gosec found issues: fix them, or annotate the line with // #nosec G<rule> -- why it is safe"

if ((failed)); then
  exit 1
fi
log "verify: ok"
