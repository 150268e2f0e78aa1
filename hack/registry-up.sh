#!/usr/bin/env bash
# Starts the integration tests' image registry (test/integration/internal/
# registry: go-containerregistry's registry with TLS from a test CA and
# basic auth, on 127.0.0.1 only), makes the tests' containerd trust it, and
# writes an env file describing it. Run it after hack/containerd-up.sh:
# containerd reads the registry's hosts.toml from its config_path
# ($NODEAGENT_CONTAINERD_DIR/certs.d) at each pull, so no restart is needed.
# Idempotent: when it already runs, it only prints the env file.
#
# Usage: hack/registry-up.sh
# Env:   NODEAGENT_REGISTRY_DIR    state dir (default /var/lib/nodeagent-test/registry)
#        NODEAGENT_CONTAINERD_DIR  the containerd to configure (default /var/lib/nodeagent-test/containerd)
# Stop it with hack/registry-down.sh. The images are pushed by the test
# framework (a registry starts empty: it keeps them in memory).
set -euo pipefail
shopt -s inherit_errexit

HACK=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# lib.sh for phase; registry-common.sh's log, sourced after it, wins.
source "$HACK/lib.sh"
source "$HACK/registry-common.sh"
START_TIMEOUT=30

die() {
	echo "registry-up.sh: $*" >&2
	exit 1
}

running_pid() {
	local pid
	pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ $(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") == *"-addr-file $ADDR_FILE "* ]] || return 1
	echo "$pid"
}

# write_pki: a CA of the tests' own and a serving certificate for
# 127.0.0.1 signed by it.
write_pki() {
	[[ -f $CA_FILE && -f $CERT && -f $KEY ]] && return 0
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$DIR/ca.key" -subj "/CN=nodeagent-test-registry-ca" -days 3650 \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
		-out "$CA_FILE" 2>/dev/null
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$KEY" -subj "/CN=127.0.0.1" -out "$DIR/tls.csr" 2>/dev/null
	openssl x509 -req -in "$DIR/tls.csr" -CA "$CA_FILE" -CAkey "$DIR/ca.key" -CAcreateserial -days 365 \
		-extfile <(printf '[ext]\n%s\n' "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" "subjectAltName=IP:127.0.0.1") \
		-extensions ext -out "$CERT" 2>/dev/null
	rm -f "$DIR/tls.csr"
	chmod 0600 "$DIR/ca.key" "$KEY"
}

# build: go build (without -trimpath, so that it shares the compiled
# go-containerregistry packages with the test binary, which links them too);
# the Go build cache makes a warm build take a second, a cold one
# (go-containerregistry's packages) several.
build() {
	(cd "$HACK/../test/integration" && go build -o "$BIN.tmp" ./internal/registry) ||
		die "building the registry failed"
	mv "$BIN.tmp" "$BIN"
}

start() {
	[[ -f $PASSWORD_FILE ]] || { openssl rand -hex 16 >"$PASSWORD_FILE" && chmod 0600 "$PASSWORD_FILE"; }
	rm -f "$ADDR_FILE"
	if [[ -f $LOG ]]; then
		mv "$LOG" "$LOG.1"
	fi
	setsid "$BIN" -cert "$CERT" -key "$KEY" -user "$USER_NAME" -password-file "$PASSWORD_FILE" \
		-addr-file "$ADDR_FILE" </dev/null >"$LOG" 2>&1 9>&- &
	echo $! >"$PIDFILE"
}

wait_ready() {
	local pid=$1 deadline=$((SECONDS + START_TIMEOUT))
	until [[ -f $ADDR_FILE ]]; do
		if ! alive "$pid"; then
			tail -n 20 "$LOG" >&2 || true
			die "the registry exited"
		fi
		((SECONDS < deadline)) || die "the registry did not listen within ${START_TIMEOUT}s"
		sleep 0.05
	done
	# The ping needs credentials: 401 proves TLS (against our CA) and the
	# handler both work.
	[[ $(curl -s --cacert "$CA_FILE" -o /dev/null -w '%{http_code}' "https://$(cat "$ADDR_FILE")/v2/") == 401 ]] ||
		die "the registry does not answer over TLS at $(cat "$ADDR_FILE")"
}

# trust: containerd's hosts.toml for the registry's host:port.
trust() {
	local host=$1
	rm -rf "${CERTS_D:?}"/127.0.0.1:*
	mkdir -p "$CERTS_D/$host"
	cat >"$CERTS_D/$host/hosts.toml" <<-EOT
		server = "https://$host"

		[host."https://$host"]
		  capabilities = ["pull", "resolve"]
		  ca = "$CA_FILE"
	EOT
}

write_env() {
	local pid=$1 host=$2 f
	f=$(mktemp "$ENV_FILE.XXXXXX")
	printf "%s='%s'\n" \
		REGISTRY_HOST "$host" \
		REGISTRY_PID "$pid" \
		REGISTRY_CA_FILE "$CA_FILE" \
		REGISTRY_USER "$USER_NAME" \
		REGISTRY_PASSWORD "$(cat "$PASSWORD_FILE")" \
		REGISTRY_LOG "$LOG" >"$f"
	chmod 0600 "$f"
	mv "$f" "$ENV_FILE"
}

main() {
	local pid host
	command -v openssl >/dev/null || die "openssl is missing"
	[[ -f $CONTAINERD_DIR/config.toml ]] && grep -q "config_path = \"$CERTS_D\"" "$CONTAINERD_DIR/config.toml" ||
		die "$CONTAINERD_DIR/config.toml does not read $CERTS_D: run hack/containerd-up.sh first (after a containerd-down.sh if it is older)"
	mkdir -p "$DIR"
	chmod 0700 "$DIR"
	exec 9>"$DIR.lock"
	flock 9
	write_pki
	if ! pid=$(running_pid); then
		phase "registry: build" build
		start
		pid=$(cat "$PIDFILE")
	fi
	phase "registry: start" wait_ready "$pid"
	host=$(cat "$ADDR_FILE")
	trust "$host"
	write_env "$pid" "$host"
	echo "$ENV_FILE"
}

main "$@"
