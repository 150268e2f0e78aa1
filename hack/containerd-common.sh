# shellcheck shell=bash disable=SC2034 # the variables are used by the scripts that source this
# What hack/containerd-up.sh and containerd-down.sh share: the layout of the
# private containerd's state dir, its network names, and small helpers.
# Source it; it defines SCRIPT_NAME-prefixed logging from the caller's name.

DIR=${NODEAGENT_CONTAINERD_DIR:-/var/lib/nodeagent-test/containerd}

SOCK=$DIR/containerd.sock
PIDFILE=$DIR/containerd.pid
CONFIG=$DIR/config.toml
LOG=$DIR/containerd.log
ROOT=$DIR/root
STATE=$DIR/state
CNI_CONF_DIR=$DIR/cni/net.d
CNI_IPAM_DIR=$DIR/cni/ipam
LOG_ROOT=$DIR/pod-logs
ENV_FILE=$DIR/env
# The registry config_path: hosts.toml files by registry host.
CERTS_D=$DIR/certs.d
CNI_BIN_DIR=/usr/lib/cni
# A second containerd beside the tests' one (the conformance run's) needs
# a bridge and a subnet of its own.
CNI_NETWORK=${NODEAGENT_CNI_NETWORK:-nodeagent}
CNI_BRIDGE=${NODEAGENT_CNI_BRIDGE:-nodeagent0}
POD_SUBNET=${NODEAGENT_POD_SUBNET:-10.233.0.0/24}
NAMESPACE=k8s.io

SCRIPT_NAME=$(basename "$0")

log() {
	echo "$SCRIPT_NAME: $*" >&2
}

ctr_() {
	timeout 10 ctr -a "$SOCK" -n "$NAMESPACE" "$@"
}

# alive <pid>: the process runs. A zombie does not count: this machine's
# PID 1 reaps slowly, so a stopped daemon lingers as one for a while.
alive() {
	local state
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ $state != Z ]]
}

# Matches on a captured string: `| grep -q` could stop reading early, and
# the writer's SIGPIPE would fail the pipe under pipefail.
cmdline_has() {
	[[ $(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") == *"$2"* ]]
}

# cri_call <method> [pod sandbox id]: a CRI v1 RuntimeService call whose
# request is empty or has the id as field 1, hand-encoded as a gRPC frame and
# sent with curl over HTTP/2 (crictl is neither packaged nor fetchable here).
# True if the call answered grpc-status 0.
cri_call() {
	local method=$1 id=${2:-} frame='\0\0\0\0\0' status
	if [[ -n $id ]]; then
		((${#id} < 126)) || return 1
		frame=$(printf '\\0\\0\\0\\0\\x%02x\\x0a\\x%02x' $((${#id} + 2)) ${#id})
	fi
	# shellcheck disable=SC2059 # the frame is a format of escapes only
	status=$(printf "$frame%s" "$id" |
		timeout 30 curl -s --http2-prior-knowledge --unix-socket "$SOCK" \
			-H 'content-type: application/grpc' -H 'te: trailers' --data-binary @- \
			-o /dev/null -D - "http://localhost/runtime.v1.RuntimeService/$method" 2>/dev/null |
		tr -d '\r' | sed -n 's/^grpc-status: *//p' | tail -1) || return 1
	[[ $status == 0 ]]
}
