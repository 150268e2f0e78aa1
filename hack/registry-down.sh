#!/usr/bin/env bash
# Stops the test registry that hack/registry-up.sh started and removes
# containerd's trust in it. Idempotent.
#
# Usage: hack/registry-down.sh [--purge]
#   --purge: also delete the state dir (CA, keys, password, log).
set -euo pipefail
shopt -s inherit_errexit

source "$(dirname "${BASH_SOURCE[0]}")/registry-common.sh"

main() {
	local pid deadline
	mkdir -p "$(dirname "$DIR")"
	exec 9>"$DIR.lock"
	flock 9
	pid=$(cat "$PIDFILE" 2>/dev/null || true)
	if [[ $pid =~ ^[0-9]+$ ]] && alive "$pid" &&
		[[ $(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") == *"-addr-file $ADDR_FILE "* ]]; then
		log "stopping the registry (pid $pid)"
		kill -TERM "$pid" 2>/dev/null || true
		deadline=$((SECONDS + 10))
		while alive "$pid" && ((SECONDS < deadline)); do
			sleep 0.05
		done
		alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$PIDFILE" "$ADDR_FILE"
	if [[ -d $CERTS_D ]]; then
		rm -rf "${CERTS_D:?}"/127.0.0.1:*
	fi
	if [[ ${1:-} == --purge ]]; then
		rm -rf "${DIR:?}"
	fi
}

main "$@"
