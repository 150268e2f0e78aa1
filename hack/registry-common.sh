# shellcheck shell=bash disable=SC2034 # the variables are used by the scripts that source this
# What hack/registry-up.sh and registry-down.sh share: the layout of the
# test registry's state dir and of the containerd config it writes into.

DIR=${NODEAGENT_REGISTRY_DIR:-/var/lib/nodeagent-test/registry}
CONTAINERD_DIR=${NODEAGENT_CONTAINERD_DIR:-/var/lib/nodeagent-test/containerd}
# containerd's registry config_path (see containerd-up.sh): one directory
# per host, each with a hosts.toml.
CERTS_D=$CONTAINERD_DIR/certs.d

BIN=$DIR/registry
PIDFILE=$DIR/registry.pid
ADDR_FILE=$DIR/addr
LOG=$DIR/registry.log
ENV_FILE=$DIR/env
CA_FILE=$DIR/ca.crt
CERT=$DIR/tls.crt
KEY=$DIR/tls.key
PASSWORD_FILE=$DIR/password
USER_NAME=nodeagent-test

SCRIPT_NAME=$(basename "$0")

log() {
	echo "$SCRIPT_NAME: $*" >&2
}

# alive <pid>: the process runs (a zombie does not count).
alive() {
	local state
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ $state != Z ]]
}
