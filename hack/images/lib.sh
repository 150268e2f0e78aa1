# shellcheck shell=bash
# How the image scripts (build.sh, e2e.sh) make OCI image layouts from a root
# filesystem, deterministically, without a registry or a container engine.
# Source it; the caller sets umask 022 and LC_ALL=C (both end up in the bytes).

BUSYBOX_BIN=/bin/busybox
IMAGE_PATH_ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

sha256_of() {
	sha256sum "$1" | cut -d' ' -f1
}

size_of() {
	stat -c %s "$1"
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


# busybox_rootfs <dir>: a root filesystem of the static busybox, a link for
# each applet, and the passwd and group files of root and nobody.
busybox_rootfs() {
	local rootfs=$1 applet
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
}
