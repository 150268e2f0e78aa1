# shellcheck shell=bash
# Shared helpers for hack/ scripts; source it, do not run it.

# repo_root prints the repository root (the directory holding go.work).
repo_root() {
  cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd
}

# go_modules prints every module directory below the root, relative to it
# (".", "staging/podtypes", ...), sorted. testdata trees are not modules.
go_modules() {
  local root=$1
  (cd "$root" && find . -name go.mod -not -path './.git/*' -not -path '*/testdata/*' -printf '%h\n' |
    sed -e 's|^\./||' -e 's|^\.$|.|' | sort)
}

# staging_modules prints the staging module directories.
staging_modules() {
  go_modules "$1" | grep '^staging/' || true
}

# staging_modfile writes a copy of the staging module $2's go.mod and go.sum
# into the directory $3, with every staging module replaced by its directory
# in the tree $1, and prints the copy's path, for `go ... -modfile=`. The
# staging go.mod files require their siblings at the published version
# (staging/VERSION) with no replace directive, as an importer needs them;
# in the workspace go.work supplies the tree, and a GOWORK=off command in
# the tree (tidy, the unit tests) supplies it through this copy, so that it
# neither needs the published versions nor writes their sums into go.sum.
staging_modfile() {
  local root=$1 mod=$2 dir=$3 sib
  local out=$dir/$(basename "$mod").mod
  cp "$root/$mod/go.mod" "$out"
  cp "$root/$mod/go.sum" "${out%.mod}.sum" 2>/dev/null || : >"${out%.mod}.sum"
  for sib in $(staging_modules "$root"); do
    go mod edit -replace="$(awk '$1 == "module" {print $2; exit}' "$root/$sib/go.mod")=$root/$sib" "$out"
  done
  echo "$out"
}

# log prints a timestamped progress line to stderr.
log() {
  printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

# Phases: how long each step of a run took, printed at its end. A script
# marks a step with `phase NAME CMD...`. The scripts a run starts (the test
# framework's calls to the *-up.sh scripts included) inherit
# NODEAGENT_PHASES, the file the steps are recorded in, and
# NODEAGENT_PHASE_DEPTH, how deep in other steps they run; the script that
# made the file (phases_init) prints it (phases_finish), also when a step
# failed.

# phases_init: records this run's steps in a new file, unless a script
# above this one does already.
phases_init() {
  [[ -z ${NODEAGENT_PHASES:-} ]] || return 0
  NODEAGENT_PHASES=$(mktemp "${TMPDIR:-/tmp}/nodeagent-phases.XXXXXX")
  PHASES_OWNED=1
  export NODEAGENT_PHASES
}

# phases_finish: if phases_init made the file, prints the steps it holds
# and removes it. Call it from the EXIT trap.
phases_finish() {
  [[ -n ${PHASES_OWNED:-} && -f ${NODEAGENT_PHASES:-} ]] || return 0
  phase_summary "$NODEAGENT_PHASES" >&2
  rm -f "$NODEAGENT_PHASES"
}

# phase NAME CMD...: runs CMD, logs how long it took, records its start and
# end when NODEAGENT_PHASES is set, and returns CMD's status. CMD may be a
# function of this shell, so that what it sets stays set; it then runs as
# any other command, not as a condition, so that set -e still stops it at
# its first failure: that ends the script inside it, its end is never
# recorded, and the summary says it did not finish.
phase() {
  local name=$1 id start depth=${NODEAGENT_PHASE_DEPTH:-0} rc=0 status=ok
  shift
  start=$EPOCHREALTIME
  id="$$.$start"
  phase_record begin "$id" "$depth" "$start" "$name"
  if declare -F "$1" >/dev/null; then
    NODEAGENT_PHASE_DEPTH=$((depth + 1)) "$@"
    rc=$?
  else
    NODEAGENT_PHASE_DEPTH=$((depth + 1)) "$@" || rc=$?
  fi
  ((rc == 0)) || status="failed (exit $rc)"
  phase_record end "$id" "$EPOCHREALTIME" "$status"
  log "$name: $status, $(seconds_since "$start")s"
  return "$rc"
}

# seconds_since START: the seconds from START (an $EPOCHREALTIME) to now,
# to a tenth.
seconds_since() {
  awk -v s="$1" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f", e - s }'
}

phase_record() {
  [[ -z ${NODEAGENT_PHASES:-} ]] || (
    IFS=$'\t'
    printf '%s\n' "$*" >>"$NODEAGENT_PHASES"
  )
}

# phase_summary FILE: the steps recorded in FILE, in the order they began,
# each indented under the step it ran in, with how long it took and how it
# ended, and the total of the outermost ones.
phase_summary() {
  awk -F '\t' '
    $1 == "begin" { order[n++] = $2; depth[$2] = $3; start[$2] = $4; name[$2] = $5 }
    $1 == "end" { end[$2] = $3; status[$2] = $4 }
    END {
      print "== time by phase =="
      for (i = 0; i < n; i++) {
        id = order[i]
        label = sprintf("%*s%s", 2 * depth[id], "", name[id])
        if (id in end) {
          printf "%-50s %8.1fs  %s\n", label, end[id] - start[id], status[id]
        } else {
          printf "%-50s %9s  did not finish\n", label, "-"
        }
        if (depth[id] == 0 && (id in end)) total += end[id] - start[id]
      }
      printf "%-50s %8.1fs\n", "total", total
    }' "$1"
}
