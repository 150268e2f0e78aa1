# The entry points; each target is a script under hack/ that can be run alone.
.PHONY: all verify test test-unit test-fuzz test-integration bench build run conformance scale

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

# What CI runs: static checks, unit tests, a bounded fuzzing run, then the
# integration tests against real containerd, etcd and kube-apiserver,
# which it starts itself.
test: verify test-unit test-fuzz test-integration

bench:
	hack/bench.sh

# bin/nodeagent and bin/manifestctl, built as they ship (hack/build.sh
# says how).
build:
	hack/build.sh bin/nodeagent
	hack/build.sh bin/manifestctl

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
