#!/usr/bin/env bash
# Stops the private containerd that hack/containerd-up.sh started and removes
# what tests left behind: pods and containers, shims, mounts, network
# namespaces, the CNI bridge, IP allocations and pod cgroups. Idempotent:
# with nothing running it changes nothing and exits 0.
#
# Usage: hack/containerd-down.sh [--purge]
#   --purge (or NODEAGENT_CONTAINERD_PURGE=1): also delete the state dir,
#   images included, so that the next up starts from scratch.
# Env:   NODEAGENT_CONTAINERD_DIR   state dir (default /var/lib/nodeagent-test/containerd)
#        NODEAGENT_CGROUP_PARENTS   top-level pod cgroup names to remove
#                                   (default "k8s.io nodeagent")
set -euo pipefail
shopt -s inherit_errexit

source "$(dirname "${BASH_SOURCE[0]}")/containerd-common.sh"
PURGE=${NODEAGENT_CONTAINERD_PURGE:-0}
# k8s.io: containerd's own parent when a sandbox has no cgroup parent
# (/k8s.io/<id>); nodeagent: the parent the agent passes (/nodeagent/...).
CGROUP_PARENTS=${NODEAGENT_CGROUP_PARENTS:-k8s.io nodeagent}

STOP_TIMEOUT=10

# wait_gone <seconds> <pid>...: true once all have exited.
wait_gone() {
	local deadline=$((SECONDS + $1)) pid
	shift
	for pid in "$@"; do
		while alive "$pid"; do
			((SECONDS < deadline)) || return 1
			sleep 0.05
		done
	done
}

# pids_with <process name> <cmdline fragment>: live processes of that name
# whose command line contains the fragment. Matching our own config or
# socket keeps any other containerd on the machine out of reach.
pids_with() {
	local pid
	for pid in $(pgrep -x "$1"); do
		alive "$pid" && cmdline_has "$pid" "$2" && echo "$pid"
	done
	return 0
}

# Through the CRI first: StopPodSandbox runs CNI DEL (IP released, netns
# deleted) and RemovePodSandbox removes the pod's containers as well.
remove_pods() {
	local id
	for id in $(ctr_ containers ls -q 'labels."io.cri-containerd.kind"==sandbox'); do
		if ! { cri_call StopPodSandbox "$id" && cri_call RemovePodSandbox "$id"; }; then
			log "CRI could not remove pod sandbox $id; removing it through ctr"
		fi
	done
}

# Whatever the CRI did not remove (or was not made through it): kill the
# tasks, then delete the containers with their snapshots.
remove_containers() {
	local ids
	mapfile -t ids < <(ctr_ tasks ls -q)
	((${#ids[@]} == 0)) || ctr_ tasks rm -f "${ids[@]}" >/dev/null || true
	mapfile -t ids < <(ctr_ containers ls -q)
	((${#ids[@]} == 0)) || ctr_ containers rm "${ids[@]}" >/dev/null || true
}

# By the pid file's pid and, should the file be stale or gone, by a search
# for a containerd running our config.
containerd_pids() {
	local p
	for p in $({ cat "$PIDFILE" 2>/dev/null || true; pgrep -x containerd; } | sort -u); do
		[[ $p =~ ^[0-9]+$ ]] && alive "$p" && cmdline_has "$p" "--config $CONFIG " && echo "$p"
	done
	return 0
}

# A containerd that died with pods still knows them when it next starts (its
# metadata survives) and would hand them to the next test as NOTREADY pods.
# Their CRI directories show they exist; restart it briefly so that they are
# removed through the CRI like any other.
revive_for_cleanup() {
	local pid deadline=$((SECONDS + 30))
	[[ -f $CONFIG && -z $(containerd_pids) ]] || return 0
	compgen -G "$ROOT/io.containerd.grpc.v1.cri/sandboxes/*" >/dev/null ||
		compgen -G "$STATE/io.containerd.runtime.v2.task/$NAMESPACE/*" >/dev/null || return 0
	log "containerd stopped with pods left; restarting it to remove them"
	setsid containerd --config "$CONFIG" </dev/null >>"$LOG" 2>&1 9>&- &
	pid=$!
	echo "$pid" >"$PIDFILE"
	until cri_call Version; do
		if ! alive "$pid" || ((SECONDS >= deadline)); then
			log "containerd did not come back; cleaning up without it"
			return 0
		fi
		sleep 0.1
	done
}

stop_containerd() {
	local pids
	mapfile -t pids < <(containerd_pids)
	((${#pids[@]} > 0)) || return 0
	log "stopping containerd (pid ${pids[*]})"
	kill -TERM "${pids[@]}" 2>/dev/null || true
	wait_gone "$STOP_TIMEOUT" "${pids[@]}" && return 0
	log "containerd did not exit within ${STOP_TIMEOUT}s; killing it"
	kill -KILL "${pids[@]}" 2>/dev/null || true
	wait_gone 5 "${pids[@]}"
}

# Shims outlive containerd by design; ours name our socket as -address.
# (pgrep sees containerd-shim-runc-v2 by its name cut to 15 characters.)
kill_shims() {
	local pids
	mapfile -t pids < <(pids_with containerd-shim "-address $SOCK ")
	((${#pids[@]} > 0)) || return 0
	log "killing leftover shims (pid ${pids[*]})"
	kill -TERM "${pids[@]}" 2>/dev/null || true
	wait_gone 5 "${pids[@]}" && return 0
	kill -KILL "${pids[@]}" 2>/dev/null || true
	wait_gone 5 "${pids[@]}"
}

# Our pod cgroups in every hierarchy (cgroup v1 has one per controller, plus
# name=systemd and the hybrid cgroup2 mount), deepest first.
pod_cgroups() {
	local h parent
	for h in /sys/fs/cgroup/*/; do
		for parent in $CGROUP_PARENTS; do
			[[ -d $h$parent ]] && find "$h$parent" -depth -type d
		done
	done
	return 0
}

# Container processes that lost their shim still sit in the pod cgroups:
# kill them (thawing frozen ones, which cannot die frozen), then remove the
# cgroups leaf first, since a cgroup with children cannot be removed.
remove_cgroups() {
	local cgroups cg procs pids=()
	mapfile -t cgroups < <(pod_cgroups)
	((${#cgroups[@]} > 0)) || return 0
	for cg in "${cgroups[@]}"; do
		if [[ -f $cg/freezer.state ]]; then
			echo THAWED 2>/dev/null >"$cg/freezer.state" || true
		fi
		# The cgroup may vanish meanwhile (runc removing it).
		mapfile -t procs 2>/dev/null <"$cg/cgroup.procs" || continue
		pids+=("${procs[@]}")
	done
	if ((${#pids[@]} > 0)); then
		mapfile -t pids < <(printf '%s\n' "${pids[@]}" | sort -u)
		log "killing leftover pod processes (pid ${pids[*]})"
		kill -KILL "${pids[@]}" 2>/dev/null || true
		wait_gone 5 "${pids[@]}" || log "some pod processes did not exit"
	fi
	for cg in "${cgroups[@]}"; do
		rmdir "$cg" 2>/dev/null || log "cannot remove cgroup $cg"
	done
}

# Mounts under the state dir (container rootfs, sandbox /dev/shm, overlay
# tests), newest first so that stacked mounts come off in order.
unmount_all() {
	local mps mp
	mapfile -t mps < <(awk -v d="$DIR/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | tac)
	for mp in "${mps[@]}"; do
		mp=$(printf '%b' "$mp") # mountinfo escapes blanks as \040
		umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || log "cannot unmount $mp"
	done
}

# Pod network namespaces left by pods that never got a CNI DEL. Ours are the
# ones whose interfaces hold an address in our pod subnet.
remove_netns() {
	local ns prefix=${POD_SUBNET%.*}.
	for ns in /run/netns/cni-*; do
		[[ -e $ns ]] || continue
		[[ $(ip -n "${ns##*/}" -4 -o addr show 2>/dev/null) == *" inet $prefix"* ]] || continue
		log "removing network namespace ${ns##*/}"
		ip netns delete "${ns##*/}" 2>/dev/null || log "cannot remove $ns"
	done
}

# With no pod left, every allocation and cached CNI result of our network is
# stale. containerd's own loopback network caches results by sandbox id: ours
# are the ids that have a directory in our CRI root.
remove_network() {
	local sandbox
	if ip link show "$CNI_BRIDGE" >/dev/null 2>&1; then
		ip link del "$CNI_BRIDGE" || log "cannot delete $CNI_BRIDGE"
	fi
	rm -rf "${CNI_IPAM_DIR:?}/$CNI_NETWORK"
	rm -f /var/lib/cni/results/"$CNI_NETWORK"-*
	for sandbox in "$ROOT"/io.containerd.grpc.v1.cri/sandboxes/*; do
		rm -f "/var/lib/cni/results/cni-loopback-${sandbox##*/}-lo"
	done
}

# runc keeps its state under a fixed path; a shim killed above could not
# delete it. Ours are the ids with a task bundle in our state dir.
remove_runc_state() {
	local bundle
	for bundle in "$STATE/io.containerd.runtime.v2.task/$NAMESPACE"/*; do
		[[ -e $bundle ]] && rm -rf "/run/containerd/runc/$NAMESPACE/${bundle##*/}"
	done
	return 0
}

parse_args() {
	while (($# > 0)); do
		case $1 in
		--purge) PURGE=1 ;;
		-h | --help)
			sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"
			exit 0
			;;
		*)
			log "unknown argument: $1 (usage: $0 [--purge])"
			exit 2
			;;
		esac
		shift
	done
}

main() {
	parse_args "$@"
	mkdir -p "$(dirname "$DIR")"
	# Not while containerd-up.sh is starting it.
	exec 9>"$DIR.lock"
	flock 9

	# A purge deletes the metadata too: no need to revive containerd for it.
	[[ $PURGE == 1 ]] || revive_for_cleanup
	if [[ -S $SOCK ]] && ctr_ version >/dev/null 2>&1; then
		remove_pods
		remove_containers
	fi
	stop_containerd
	kill_shims
	remove_cgroups
	unmount_all
	remove_runc_state
	remove_netns
	remove_network
	rm -f "$PIDFILE"
	if [[ $PURGE == 1 ]]; then
		log "purging $DIR"
		rm -rf "${DIR:?}"
	fi
}

main "$@"
