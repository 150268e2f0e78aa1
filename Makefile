# The entry points; each target is a script under hack/ that can be run alone.
.PHONY: all verify test test-unit test-fuzz test-integration test-modules bench build install run conformance scale

all: test

verify:
	hack/verify.sh

test-unit:
	hack/test-unit.sh

# Each Go fuzz target for FUZZ_TIME (default 8s).
test-fuzz:
	hack/test-fuzz.sh

test-integration:
	hack/test-integration.sh

# The staging modules as a project outside the repository gets them: from
# a module proxy, at staging/VERSION, with GOWORK=off.
test-modules:
	hack/test-modules.sh

# What CI runs: static checks, unit tests, a bounded fuzzing run, the
# integration tests against real containerd, etcd and kube-apiserver,
# which it starts itself, then the module test (last: it reuses the
# compilation of the binaries the integration tests built); at the end,
# also after a failure, the time each phase took (hack/test.sh).
test:
	hack/test.sh

bench:
	hack/bench.sh

# bin/nodeagent and bin/manifestctl, built as they ship (hack/build.sh
# says how).
build:
	hack/build.sh bin/nodeagent
	hack/build.sh bin/manifestctl

# The binaries, nodeagent's systemd unit and its config file (kept if one
# is there), under DESTDIR: PREFIX (/usr/local), SYSCONFDIR (/etc) and
# SYSTEMDUNITDIR ($PREFIX/lib/systemd/system) as hack/install.sh says.
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
install: build
	PREFIX="$(PREFIX)" SYSCONFDIR="$(SYSCONFDIR)" SYSTEMDUNITDIR="$(SYSTEMDUNITDIR)" DESTDIR="$(DESTDIR)" hack/install.sh

# nodeagent in the foreground on examples/manifests, against the local
# containerd, with its state under /var/lib/nodeagent-run (needs root).
run:
	hack/run.sh

# The upstream [NodeConformance] e2e tests against nodeagent (NODE=kubelet:
# against the upstream kubelet) on a private containerd and control plane
# (needs root; a run takes about 30 minutes, and the first one builds the
# e2e suite first: about 22 minutes more on two shared cores).
conformance:
	hack/conformance.sh

# SCALE_NODES (default 10) hollow nodes of one kind, NODE=nodeagent (the
# real binary on a fake CRI runtime) or NODE=kubelet (kubemark), on a
# private control plane, 30 pods each created and deleted; prints what the
# control plane served (needs root; hack/scale.sh says what it measures).
scale:
	hack/scale.sh
