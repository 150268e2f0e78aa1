# The entry points; each target is a script under hack/ that can be run alone.
.PHONY: all verify test test-unit test-integration bench

all: test

verify:
	hack/verify.sh

test-unit:
	hack/test-unit.sh

test-integration:
	hack/test-integration.sh

# What CI runs: static checks, unit tests, then the integration tests
# against real containerd, etcd and kube-apiserver, which it starts itself.
test: verify test-unit test-integration

bench:
	hack/bench.sh
