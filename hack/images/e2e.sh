#!/usr/bin/env bash
# Builds, as OCI image layout tarballs, the images the upstream e2e suite's
# node tests run, under the names the suite asks for (no outside registry is
# reachable here). Each is made from what this machine can build:
#
#   agnhost     the real agnhost (built from k8s.io/kubernetes by
#               controlplane-build.sh) on the busybox root filesystem in
#               place of alpine, with the user and group agnhost's image
#               defines, the porter test certificate, and this machine's
#               curl with its libraries (tests run curl in agnhost pods)
#   busybox     Debian's static busybox
#   kitten,     agnhost's test-webserver serving the images' own html files
#   nautilus
#   nginx       NOT nginx: busybox's httpd serving /usr/share/nginx/html on
#               port 80, which is all the node tests ask of it
#   nonroot     busybox with USER 1234
#   nonewprivs  the real nnp program (k8s.io/kubernetes/test/images/nonewprivs),
#               setuid root
#   pause       the project's pause program (hack/images/pause)
#
# Usage: hack/images/e2e.sh OUT IMAGE...
#   IMAGE: refs as `e2e.test --list-images` prints them.
# Env:   AGNHOST_BIN, NONEWPRIVS_BIN  the built programs
#        KUBERNETES_SRC               k8s.io/kubernetes in the module cache
# Writes OUT/e2e-images.list, one "REF TAR" line per image it could make,
# and prints its path; a ref it cannot make is named on stderr and left
# out, so that the run skips the tests that need it.
set -euo pipefail
shopt -s inherit_errexit

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
umask 022
export LC_ALL=C
# shellcheck source=hack/images/lib.sh
source "$HERE/lib.sh"

OUT=$1
shift

log() { echo "e2e.sh: $*" >&2; }

# add_program ROOTFS PATH: a dynamically linked program of this machine, at
# the same path, with the loader and every library ldd names.
add_program() {
	local rootfs=$1 prog=$2 lib
	install -D -m 0755 "$prog" "$rootfs$prog"
	for lib in $(ldd "$prog" | grep -o '/[^ ]*'); do
		[[ -e $rootfs$lib ]] || install -D -m 0755 "$lib" "$rootfs$lib"
	done
}

# agnhost_rootfs DIR: agnhost on busybox, as agnhost's Dockerfile lays it out.
agnhost_rootfs() {
	local rootfs=$1
	busybox_rootfs "$rootfs"
	install -m 0755 "$AGNHOST_BIN" "$rootfs/agnhost"
	ln -s agnhost "$rootfs/agnhost-2"
	mkdir -p "$rootfs/uploads"
	install -m 0644 "$KUBERNETES_SRC/test/images/agnhost/porter/localhost.crt" "$rootfs/localhost.crt"
	install -m 0644 "$KUBERNETES_SRC/test/images/agnhost/porter/localhost.key" "$rootfs/localhost.key"
	echo 'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh' >>"$rootfs/etc/passwd"
	printf '%s\n' 'user-defined-in-image:x:1000:' 'group-defined-in-image:x:50000:user-defined-in-image' >>"$rootfs/etc/group"
	add_program "$rootfs" /usr/bin/curl
}

# build NAME REF: makes the image NAME (the last path element of REF, tag
# dropped) as REF; false if this script has no recipe for it.
build() {
	local name=$1 ref=$2 work rootfs config
	work=$(mktemp -d "$OUT/.build.XXXXXX")
	rootfs=$work/rootfs
	local env="\"Env\":[\"$IMAGE_PATH_ENV\"]"
	case $name in
	busybox)
		busybox_rootfs "$rootfs"
		config="{$env,\"Cmd\":[\"sh\"]}"
		;;
	agnhost)
		agnhost_rootfs "$rootfs"
		config="{$env,\"Entrypoint\":[\"/agnhost\"],\"Cmd\":[\"pause\"]}"
		;;
	kitten | nautilus)
		agnhost_rootfs "$rootfs"
		cp -r "$KUBERNETES_SRC/test/images/$name/html/." "$rootfs/"
		chmod -R u+w,go-w "$rootfs"
		config="{$env,\"Entrypoint\":[\"/agnhost\"],\"Cmd\":[\"test-webserver\"]}"
		;;
	nginx)
		busybox_rootfs "$rootfs"
		mkdir -p "$rootfs/usr/share/nginx/html"
		echo '<html><body>nginx stand-in: busybox httpd</body></html>' >"$rootfs/usr/share/nginx/html/index.html"
		config="{$env,\"Cmd\":[\"httpd\",\"-f\",\"-p\",\"80\",\"-h\",\"/usr/share/nginx/html\"],\"ExposedPorts\":{\"80/tcp\":{}}}"
		;;
	nonroot)
		busybox_rootfs "$rootfs"
		config="{$env,\"Cmd\":[\"sh\"],\"User\":\"1234\"}"
		;;
	nonewprivs)
		busybox_rootfs "$rootfs"
		mkdir -p "$rootfs/usr/local/bin"
		install -m 4755 "$NONEWPRIVS_BIN" "$rootfs/usr/local/bin/nnp"
		config="{$env,\"Cmd\":[\"nnp\"]}"
		;;
	pause)
		mkdir -p "$rootfs"
		gcc -static -Os -s -o "$rootfs/pause" "$HERE/pause/pause.c"
		config='{"Entrypoint":["/pause"]}'
		;;
	*)
		rm -rf "$work"
		return 1
		;;
	esac
	make_image "$work" "$ref" "$rootfs" "$config" "$work/image.tar" >/dev/null
	mv "$work/image.tar" "$OUT/$name-${ref##*:}.tar"
	rm -rf "$work"
	echo "$ref $OUT/$name-${ref##*:}.tar"
}

main() {
	local ref name list
	for v in AGNHOST_BIN NONEWPRIVS_BIN KUBERNETES_SRC; do
		[[ -n ${!v:-} ]] || { log "$v is not set"; exit 2; }
	done
	mkdir -p "$OUT"
	list=$OUT/e2e-images.list
	: >"$list.tmp"
	for ref in "$@"; do
		name=${ref%:*}
		name=${name##*/}
		if ! build "$name" "$ref" >>"$list.tmp"; then
			log "no recipe for $ref: tests that need it cannot run"
		fi
	done
	mv "$list.tmp" "$list"
	echo "$list"
}

main "$@"
