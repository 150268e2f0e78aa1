#!/usr/bin/env bash
# Proves that a run prints the time of each of its phases at its end, also
# when one fails: a script like hack/test.sh, with phases of its own and a
# nested script with phases inside one, whose last step fails (under set
# -e, inside a function) or not at all.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
# Run under make test, this test is itself a step of a run that records
# phases: its scripts must record their own, not add to that run's.
unset NODEAGENT_PHASES NODEAGENT_PHASE_DEPTH PHASES_OWNED
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# inner.sh: as the *-up.sh scripts, a set -e script whose steps are
# functions; INNER_FAIL=1 makes its second step fail halfway.
cat >"$work/inner.sh" <<EOT
#!/usr/bin/env bash
set -euo pipefail
source "$root/hack/lib.sh"
first() { sleep 0.1; }
second() { [[ \${INNER_FAIL:-} != 1 ]]; echo "second step finished" >&2; }
phase "inner: first" first
phase "inner: second" second
EOT
# outer.sh: as hack/test.sh, stopping at the first phase that fails.
cat >"$work/outer.sh" <<EOT
#!/usr/bin/env bash
set -uo pipefail
source "$root/hack/lib.sh"
phases_init
trap phases_finish EXIT
phase "outer: a" true || exit
phase "outer: b" bash "$work/inner.sh" || exit
phase "outer: c" true || exit
EOT

# expect_line OUT REGEX WHAT: some line of OUT matches REGEX.
expect_line() {
  grep -qE -- "$2" <<<"$1" || fail "$3: no line matches '$2' in:"$'\n'"$1"
}

# The phases file goes under TMPDIR: its own, to see it removed.
mkdir "$work/tmp"
export TMPDIR=$work/tmp
out=$(bash "$work/outer.sh" 2>&1) || fail "outer.sh failed with every phase passing:"$'\n'"$out"
expect_line "$out" '^== time by phase ==$' "the summary's title"
expect_line "$out" '^outer: a +[0-9]+\.[0-9]s  ok$' "a passing phase"
expect_line "$out" '^  inner: first +0\.[1-9]s  ok$' "a nested phase, indented, with its time"
expect_line "$out" '^outer: c +[0-9]+\.[0-9]s  ok$' "the last phase"
expect_line "$out" '^total +[0-9]+\.[0-9]s$' "the total"

if out=$(INNER_FAIL=1 bash "$work/outer.sh" 2>&1); then
  fail "outer.sh passed with a failing phase"
fi
expect_line "$out" '^== time by phase ==$' "the summary's title after a failure"
expect_line "$out" '^outer: b +[0-9]+\.[0-9]s  failed \(exit 1\)$' "the failed phase"
expect_line "$out" '^  inner: first +0\.[1-9]s  ok$' "the nested phase before the failure"
expect_line "$out" '^  inner: second +-  did not finish$' "the nested phase that failed"
grep -q "second step finished" <<<"$out" && fail "set -e did not stop the failing step inside phase"
grep -q "^outer: c" <<<"$out" && fail "the run went on after a failed phase"
[[ -z $(ls -A "$TMPDIR") ]] || fail "the phases file was left behind"

if ((failures > 0)); then
  echo "hack/phases_test.sh: $failures failure(s)" >&2
  exit 1
fi
echo "hack/phases_test.sh: ok"
