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
BUSYBOX_BIN=/bin/busybox
PAUSE_REF=localhost/nodeagent/pause:1
IMAGE_PATH_ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# Fixed modes and collation: both end up in the layer bytes.
umask 022
export LC_ALL=C

die() {
	echo "build.sh: $*" >&2
	exit 1
}

sha256_of() {
	sha256sum "$1" | cut -d' ' -f1
}

size_of() {
	stat -c %s "$1"
}

# Every input whose change must change the images, so that an unchanged set
# can skip the build (containerd-up.sh runs this script on every call).
inputs_key() {
	{
		sha256sum "$HERE/build.sh" "$HERE/pause/pause.c" "$BUSYBOX_BIN"
		gcc --version
		tar --version
	} | sha256sum | cut -d' ' -f1
}

# Reproducible tar: fixed order, owners and mtimes. GNU format, because POSIX
# pax headers would record access and change times.
det_tar() {
	local dir=$1 out=$2
	shift 2
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
		--format=gnu -C "$dir" -cf "$out" "$@"
}

# put_blob <layout dir> <file>: moves file into the layout's blob store and
# prints its digest.
put_blob() {
	local layout=$1 file=$2 digest
	digest=$(sha256_of "$file")
	mv "$file" "$layout/blobs/sha256/$digest"
	echo "$digest"
}

# make_image <work dir> <ref> <rootfs dir> <image "config" JSON object> <out tar>
# Turns a root filesystem into a one-layer OCI image layout and tars it. The
# manifest digest (the image digest containerd reports) is printed.
make_image() {
	local work=$1 ref=$2 rootfs=$3 runconfig=$4 out=$5
	local layout=$work/layout arch entries layer layer_size config config_size manifest manifest_size
	arch=$(dpkg --print-architecture)
	mkdir -p "$layout/blobs/sha256"

	# The layer is stored uncompressed, so its digest is also its diff_id.
	mapfile -t entries < <(ls -A "$rootfs")
	det_tar "$rootfs" "$work/layer.tar" "${entries[@]}"
	layer_size=$(size_of "$work/layer.tar")
	layer=$(put_blob "$layout" "$work/layer.tar")

	printf '{"architecture":"%s","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$arch" "$runconfig" "$layer" >"$work/config.json"
	config_size=$(size_of "$work/config.json")
	config=$(put_blob "$layout" "$work/config.json")

	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%d}]}' \
		"$config" "$config_size" "$layer" "$layer_size" >"$work/manifest.json"
	manifest_size=$(size_of "$work/manifest.json")
	manifest=$(put_blob "$layout" "$work/manifest.json")

	# io.containerd.image.name gives `ctr images import` the full ref;
	# org.opencontainers.image.ref.name carries the tag for other OCI tools.
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"platform":{"architecture":"%s","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		"$manifest" "$manifest_size" "$arch" "$ref" "${ref##*:}" >"$layout/index.json"
	printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"

	det_tar "$layout" "$out" blobs index.json oci-layout
	echo "sha256:$manifest"
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
	local work=$1 ref=$2 out=$3 rootfs=$1/rootfs applet
	mkdir -p "$rootfs/bin" "$rootfs/etc" "$rootfs/root" "$rootfs/tmp"
	chmod 0700 "$rootfs/root"
	chmod 1777 "$rootfs/tmp"
	install -m 0755 "$BUSYBOX_BIN" "$rootfs/bin/busybox"
	for applet in $("$BUSYBOX_BIN" --list); do
		[[ $applet == busybox ]] || ln -s busybox "$rootfs/bin/$applet"
	done
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
		'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$rootfs/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nobody:x:65534:' >"$rootfs/etc/group"
	make_image "$work" "$ref" "$rootfs" "{\"Env\":[\"$IMAGE_PATH_ENV\"],\"Cmd\":[\"sh\"]}" "$out"
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
