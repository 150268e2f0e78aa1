# shellcheck shell=bash disable=SC2034 # the variables are used by the scripts that source this
# Pinned versions of the real control plane used by the integration tests, and
# where their binaries are cached. Sourced by hack/controlplane-*.sh so that the
# versions live in exactly one place.

KUBERNETES_VERSION=v1.37.2
# A 3.6 release, as chosen for the project. Kubernetes 1.37 accepts etcd from
# 3.5.24 on (kubeadm's MinExternalEtcdVersion); its own default is 3.7.0.
ETCD_VERSION=v3.6.16

# metrics-server, the aggregated API that `kubectl top` reads, scraping the
# node's /metrics/resource; built from the Go module proxy like etcd.
METRICS_SERVER_VERSION=v0.8.0

# gosec, the security linter hack/verify.sh runs, fetched by version through
# the Go module proxy (checked against the checksum database) and built once
# into the Go build cache.
GOSEC_VERSION=v2.30.0

# Binaries are cached outside the repository, keyed by version, so a machine
# builds each version once and every later run reuses it.
NODEAGENT_CACHE="${NODEAGENT_CACHE:-$HOME/.cache/nodeagent}"
KUBE_APISERVER_BIN="$NODEAGENT_CACHE/bin/kube-apiserver-$KUBERNETES_VERSION"
KUBE_CONTROLLER_MANAGER_BIN="$NODEAGENT_CACHE/bin/kube-controller-manager-$KUBERNETES_VERSION"
KUBE_SCHEDULER_BIN="$NODEAGENT_CACHE/bin/kube-scheduler-$KUBERNETES_VERSION"
KUBELET_BIN="$NODEAGENT_CACHE/bin/kubelet-$KUBERNETES_VERSION"
# kubemark, the upstream hollow node (--morph=kubelet: the kubelet's code
# on a fake runtime), for hack/scale.sh.
KUBEMARK_BIN="$NODEAGENT_CACHE/bin/kubemark-$KUBERNETES_VERSION"
# kubectl, the client the node API tests drive as an operator would.
KUBECTL_BIN="$NODEAGENT_CACHE/bin/kubectl-$KUBERNETES_VERSION"
ETCD_BIN="$NODEAGENT_CACHE/bin/etcd-$ETCD_VERSION"
# The upstream e2e suite (a test binary), agnhost and nonewprivs (programs
# of its test images) and the ginkgo CLI that runs the suite in parallel
# processes, for hack/conformance.sh.
E2E_TEST_BIN="$NODEAGENT_CACHE/bin/e2e.test-$KUBERNETES_VERSION"
AGNHOST_BIN="$NODEAGENT_CACHE/bin/agnhost-$KUBERNETES_VERSION"
NONEWPRIVS_BIN="$NODEAGENT_CACHE/bin/nonewprivs-$KUBERNETES_VERSION"
GINKGO_BIN="$NODEAGENT_CACHE/bin/ginkgo-$KUBERNETES_VERSION"
METRICS_SERVER_BIN="$NODEAGENT_CACHE/bin/metrics-server-$METRICS_SERVER_VERSION"
