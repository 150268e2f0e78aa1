#!/usr/bin/env bash
# Starts a private containerd (CRI v1) for nodeagent's real tests, with its own
# config, sockets, CNI network and locally built images, and writes an env
# file describing it. Idempotent: when it already runs and has the images,
# it only rewrites and prints the env file.
#
# Usage: hack/containerd-up.sh
# Env:   NODEAGENT_CONTAINERD_DIR  state dir (default /var/lib/nodeagent-test/containerd)
#        NODEAGENT_CACHE           build cache (default $HOME/.cache/nodeagent)
# Stop it with hack/containerd-down.sh.
set -euo pipefail
shopt -s inherit_errexit

HACK=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${NODEAGENT_CACHE:-${HOME:-/root}/.cache/nodeagent}
# lib.sh for phase; containerd-common.sh's log, sourced after it, wins.
source "$HACK/lib.sh"
source "$HACK/containerd-common.sh"
START_TIMEOUT=30

die() {
	echo "containerd-up.sh: $*" >&2
	exit 1
}

# Installs what is missing, with one `apt-get update` first (the package lists
# may be absent or stale on a fresh machine).
ensure_packages() {
	local missing=() f
	for f in /usr/bin/containerd /usr/bin/ctr /usr/bin/containerd-shim-runc-v2 \
		/usr/sbin/runc /usr/lib/cni/bridge /usr/lib/cni/host-local \
		/usr/lib/cni/loopback /bin/busybox; do
		[[ -x $f ]] || missing+=("$f")
	done
	# Debian's dynamically linked "busybox" would also provide /bin/busybox.
	[[ $(dpkg-query -W -f='${Status}' busybox-static 2>/dev/null) == *' ok installed' ]] ||
		missing+=(busybox-static)
	local extra=()
	command -v gcc >/dev/null || extra+=(gcc libc6-dev)
	command -v curl >/dev/null || extra+=(curl)
	command -v ip >/dev/null || extra+=(iproute2)
	# The manifestctl tour test drives a real terminal, with the shell
	# completion cobra's bash script needs.
	command -v tmux >/dev/null || extra+=(tmux)
	[[ -r /usr/share/bash-completion/bash_completion ]] || extra+=(bash-completion)
	((${#missing[@]} + ${#extra[@]} > 0)) || return 0

	log "installing packages (missing: ${missing[*]} ${extra[*]})"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq containerd runc containernetworking-plugins busybox-static "${extra[@]}" >/dev/null
}

# The pid file names our containerd only if that process runs our config:
# after a reboot the number may belong to anything.
running_pid() {
	local pid
	pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ $(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") == *"--config $CONFIG "* ]] || return 1
	echo "$pid"
}

# Tests for overlayfs on the filesystem that holds the snapshots: mounting is
# not enough, a write through the merged dir must land in the upper dir.
overlay_works() {
	local t ok=1
	mkdir -p "$ROOT"
	t=$(mktemp -d "$ROOT/.overlay-test.XXXXXX")
	mkdir "$t/lower" "$t/upper" "$t/work" "$t/merged"
	echo lower >"$t/lower/f"
	if mount -t overlay overlay -o "lowerdir=$t/lower,upperdir=$t/upper,workdir=$t/work" \
		"$t/merged" 2>/dev/null; then
		echo upper >"$t/merged/f" && [[ $(cat "$t/upper/f") == upper ]] && ok=0
		umount "$t/merged"
	fi
	rm -rf "$t"
	return "$ok"
}

write_cni_conf() {
	mkdir -p "$CNI_CONF_DIR" "$CNI_IPAM_DIR"
	# ipMasq off: no iptables rules. The IPAM store lives in the state dir
	# so that down --purge takes it along.
	cat >"$CNI_CONF_DIR/10-$CNI_NETWORK.conflist" <<-EOF
		{
		  "cniVersion": "1.0.0",
		  "name": "$CNI_NETWORK",
		  "plugins": [
		    {
		      "type": "bridge",
		      "bridge": "$CNI_BRIDGE",
		      "isGateway": true,
		      "ipMasq": false,
		      "hairpinMode": true,
		      "ipam": {
		        "type": "host-local",
		        "ranges": [[{"subnet": "$POD_SUBNET"}]],
		        "routes": [{"dst": "0.0.0.0/0"}],
		        "dataDir": "$CNI_IPAM_DIR"
		      }
		    }
		  ]
		}
	EOF
}

write_config() {
	local snapshotter=$1
	# restrict_oom_score_adj: this machine cannot lower oom_score_adj, and
	# without it runc fails every sandbox. Snapshotters we never use are
	# disabled so that their probes do not clutter the log.
	cat >"$CONFIG" <<-EOF
		version = 2
		root = "$ROOT"
		state = "$STATE"
		disabled_plugins = [
		  "io.containerd.snapshotter.v1.aufs",
		  "io.containerd.snapshotter.v1.btrfs",
		  "io.containerd.snapshotter.v1.devmapper",
		  "io.containerd.snapshotter.v1.zfs",
		]

		[grpc]
		  address = "$SOCK"

		[ttrpc]
		  address = "$SOCK.ttrpc"

		[plugins]
		  [plugins."io.containerd.internal.v1.opt"]
		    path = "$DIR/opt"

		  [plugins."io.containerd.grpc.v1.cri"]
		    sandbox_image = "$PAUSE_IMAGE"
		    restrict_oom_score_adj = true
		    disable_apparmor = true

		    [plugins."io.containerd.grpc.v1.cri".containerd]
		      snapshotter = "$snapshotter"
		      default_runtime_name = "runc"

		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		        runtime_type = "io.containerd.runc.v2"

		        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		          SystemdCgroup = false

		    [plugins."io.containerd.grpc.v1.cri".cni]
		      bin_dir = "$CNI_BIN_DIR"
		      conf_dir = "$CNI_CONF_DIR"
		      max_conf_num = 1

		    # One hosts.toml per registry host, read at each pull: the
		    # tests' registry (hack/registry-up.sh) adds its own there.
		    [plugins."io.containerd.grpc.v1.cri".registry]
		      config_path = "$CERTS_D"
	EOF
}

configured_snapshotter() {
	sed -n 's/^ *snapshotter = "\(.*\)"$/\1/p' "$CONFIG"
}

start_containerd() {
	local snapshotter=overlayfs
	if ! overlay_works; then
		log "overlayfs does not work under $ROOT; using the native snapshotter"
		snapshotter=native
	fi
	mkdir -p "$STATE" "$LOG_ROOT" "$CERTS_D"
	write_cni_conf
	write_config "$snapshotter"
	# One log per start, so that a failure report shows only this start.
	if [[ -f $LOG ]]; then
		mv "$LOG" "$LOG.1"
	fi
	# setsid: its own session, so that neither a closing terminal nor a
	# signal to the caller's process group (a test runner's timeout) stops it.
	# 9>&-: it must not inherit (and so hold forever) our lock.
	setsid containerd --config "$CONFIG" </dev/null >"$LOG" 2>&1 9>&- &
	echo $! >"$PIDFILE"
}

fail_start() {
	echo "containerd-up.sh: $1; last lines of $LOG:" >&2
	tail -n 30 "$LOG" >&2 || true
	exit 1
}

# wait_ready <pid>
wait_ready() {
	local pid=$1 deadline=$((SECONDS + START_TIMEOUT))
	until cri_call Version; do
		alive "$pid" || fail_start "containerd exited"
		((SECONDS < deadline)) || fail_start "the CRI did not answer within ${START_TIMEOUT}s"
		sleep 0.1
	done
}

# Imports an image unless the ref already names the digest just built (a
# changed pause.c or busybox package gives a new digest under the same ref).
ensure_image() {
	local ref=$1 digest=$2 tar=$3
	ctr_ images ls | awk -v r="$ref" -v d="$digest" '$1 == r && $3 == d { f = 1 } END { exit !f }' &&
		return 0
	log "importing $ref"
	ctr_ images import --snapshotter "$(configured_snapshotter)" "$tar" >/dev/null
}

# Single-quoted values: both bash and the Go test framework's reader (which
# strips quotes but knows no backslash escapes) read them back unchanged.
write_env() {
	local pid=$1 f
	f=$(mktemp "$ENV_FILE.XXXXXX")
	{
		printf "%s='%s'\n" \
			CONTAINERD_SOCKET "$SOCK" \
			CONTAINERD_ENDPOINT "unix://$SOCK" \
			CONTAINERD_PID "$pid" \
			CONTAINERD_ROOT "$ROOT" \
			CONTAINERD_STATE "$STATE" \
			CONTAINERD_CONFIG "$CONFIG" \
			CONTAINERD_LOG "$LOG" \
			CONTAINERD_NAMESPACE "$NAMESPACE" \
			CONTAINERD_SNAPSHOTTER "$(configured_snapshotter)" \
			PAUSE_IMAGE "$PAUSE_IMAGE" \
			PAUSE_IMAGE_DIGEST "$PAUSE_IMAGE_DIGEST" \
			BUSYBOX_IMAGE "$BUSYBOX_IMAGE" \
			BUSYBOX_IMAGE_DIGEST "$BUSYBOX_IMAGE_DIGEST" \
			BUSYBOX_IMAGE_TAR "$BUSYBOX_IMAGE_TAR" \
			CNI_CONF_DIR "$CNI_CONF_DIR" \
			CNI_NETWORK "$CNI_NETWORK" \
			CNI_BRIDGE "$CNI_BRIDGE" \
			POD_SUBNET "$POD_SUBNET" \
			CONTAINER_LOG_ROOT "$LOG_ROOT"
	} >"$f"
	chmod 0644 "$f" # mktemp makes it 0600
	mv "$f" "$ENV_FILE"
}

# start_and_import: starts containerd unless it runs, and imports the images
# it lacks.
start_and_import() {
	local pid
	if ! pid=$(running_pid); then
		start_containerd
		pid=$(cat "$PIDFILE")
	fi
	wait_ready "$pid"
	ensure_image "$PAUSE_IMAGE" "$PAUSE_IMAGE_DIGEST" "$PAUSE_IMAGE_TAR"
	ensure_image "$BUSYBOX_IMAGE" "$BUSYBOX_IMAGE_DIGEST" "$BUSYBOX_IMAGE_TAR"
}

main() {
	local images_env
	# Unix socket paths are limited to 108 bytes; leave room for the
	# ".ttrpc" suffix.
	((${#SOCK} < 100)) || die "socket path $SOCK is too long: choose a shorter NODEAGENT_CONTAINERD_DIR"
	[[ $DIR$CACHE != *\'* ]] || die "no single quotes in NODEAGENT_CONTAINERD_DIR or NODEAGENT_CACHE, please"
	phase "containerd: packages" ensure_packages
	mkdir -p "$DIR"
	# Test packages may call this in parallel: one starts, the rest wait.
	exec 9>"$DIR.lock"
	flock 9

	# images.env sets PAUSE_IMAGE, BUSYBOX_IMAGE, their digests and tars.
	# build.sh is a no-op when its inputs have not changed.
	images_env=$(phase "containerd: images" "$HACK/images/build.sh" "$CACHE/images") || die "building the images failed"
	# shellcheck source=/dev/null
	source "$images_env"

	phase "containerd: start" start_and_import
	write_env "$(cat "$PIDFILE")"
	echo "$ENV_FILE"
}

main "$@"
