#!/usr/bin/env bash
# Builds the local test images (pause and busybox) as OCI image layout
# tarballs that `ctr images import` accepts. There is no registry on the test
# machines, so these are the only images the tests can run.
#
# Usage: hack/images/build.sh [out dir]
#   default out dir: ${NODEAGENT_CACHE:-$HOME/.cache/nodeagent}/images
#
# Writes <out>/pause.tar, <out>/busybox.tar and <out>/images.env (the image
# refs, manifest digests and tar paths as shell-sourceable KEY=VALUE lines)
# and prints the path of images.env.
# Builds are deterministic: the same inputs give the same digests. When the
# inputs have not changed since the last build, nothing is rebuilt.
set -euo pipefail
# Digests come back through $(...): a failure inside must stop the build.
shopt -s inherit_errexit

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${1:-${NODEAGENT_CACHE:-${HOME:-/root}/.cache/nodeagent}/images}
PAUSE_REF=localhost/nodeagent/pause:1

# Fixed modes and collation: both end up in the layer bytes.
umask 022
export LC_ALL=C

die() {
	echo "build.sh: $*" >&2
	exit 1
}

# shellcheck source=hack/images/lib.sh
source "$HERE/lib.sh"

# Every input whose change must change the images, so that an unchanged set
# can skip the build (containerd-up.sh runs this script on every call).
inputs_key() {
	{
		sha256sum "$HERE/build.sh" "$HERE/lib.sh" "$HERE/pause/pause.c" "$BUSYBOX_BIN"
		gcc --version
		tar --version
	} | sha256sum | cut -d' ' -f1
}

build_pause() {
	local work=$1 out=$2
	mkdir -p "$work/rootfs"
	# -s strips the symbol table; the build-id note is content-derived, so
	# the binary is byte-identical between builds.
	gcc -static -Os -s -o "$work/rootfs/pause" "$HERE/pause/pause.c"
	make_image "$work" "$PAUSE_REF" "$work/rootfs" '{"Entrypoint":["/pause"]}' "$out"
}

build_busybox() {
	local work=$1 ref=$2 out=$3
	busybox_rootfs "$work/rootfs"
	make_image "$work" "$ref" "$work/rootfs" "{\"Env\":[\"$IMAGE_PATH_ENV\"],\"Cmd\":[\"sh\"]}" "$out"
}

# The package's busybox version, e.g. 1.35.0 from "BusyBox v1.35.0 (Debian ...)".
# sed reads all the help text: `| head` would SIGPIPE busybox and, under
# pipefail, fail the build now and then.
busybox_version() {
	"$BUSYBOX_BIN" | sed -n '1s/^BusyBox v\([0-9][0-9.]*\).*/\1/p'
}

check_inputs() {
	command -v gcc >/dev/null || die "gcc is missing (apt-get install gcc)"
	[[ -x $BUSYBOX_BIN ]] || die "$BUSYBOX_BIN is missing (apt-get install busybox-static)"
	# A dynamically linked busybox (Debian's "busybox" package) cannot run in
	# an image that has no libc.
	if [[ $(readelf -l "$BUSYBOX_BIN") == *'program interpreter'* ]]; then
		die "$BUSYBOX_BIN is dynamically linked (apt-get install busybox-static)"
	fi
}

build_all() {
	local key=$1 tmp version busybox_ref pause_digest busybox_digest
	version=$(busybox_version)
	[[ -n $version ]] || die "cannot read the busybox version from $BUSYBOX_BIN"
	busybox_ref=localhost/nodeagent/busybox:$version

	tmp=$(mktemp -d "$OUT/.build.XXXXXX")
	# shellcheck disable=SC2064 # expand now: $tmp is local
	trap "rm -rf '$tmp'" EXIT
	pause_digest=$(build_pause "$tmp/pause" "$tmp/pause.tar")
	busybox_digest=$(build_busybox "$tmp/busybox" "$busybox_ref" "$tmp/busybox.tar")
	mv "$tmp/pause.tar" "$tmp/busybox.tar" "$OUT/"
	printf "%s='%s'\n" \
		PAUSE_IMAGE "$PAUSE_REF" \
		PAUSE_IMAGE_DIGEST "$pause_digest" \
		PAUSE_IMAGE_TAR "$OUT/pause.tar" \
		BUSYBOX_IMAGE "$busybox_ref" \
		BUSYBOX_IMAGE_DIGEST "$busybox_digest" \
		BUSYBOX_IMAGE_TAR "$OUT/busybox.tar" >"$OUT/images.env.tmp"
	mv "$OUT/images.env.tmp" "$OUT/images.env"
	# Written last: an interrupted build leaves no stamp and is redone.
	echo "$key" >"$OUT/inputs.sha256"
}

main() {
	local key
	check_inputs
	mkdir -p "$OUT"
	# Parallel callers (several test packages starting at once) share the
	# cache; one builds, the others wait and then find the stamp current.
	exec 9>"$OUT/.lock"
	flock 9
	key=$(inputs_key)
	if [[ ! -f $OUT/images.env || $(cat "$OUT/inputs.sha256" 2>/dev/null) != "$key" ]]; then
		build_all "$key"
	fi
	echo "$OUT/images.env"
}

main "$@"
