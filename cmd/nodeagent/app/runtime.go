package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/go-logr/logr"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/cgroups"
	"github.com/nodeagent/nodeagent/internal/host"
	"github.com/nodeagent/nodeagent/internal/images"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/volumes"
)

// newCgroups sets up the pods' cgroups by QoS class, before any pod
// starts.
func (o *Options) newCgroups(reg metrics.KubeRegistry, log logr.Logger) (*cgroups.Manager, error) {
	cg, err := cgroups.New(cgroups.Options{Root: o.CgroupRoot, Driver: cgroups.Driver(o.CgroupDriver), Registry: reg, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--cgroup-driver=%s: %w", o.CgroupDriver, err)
	}
	if err := cg.Setup(); err != nil {
		return nil, fmt.Errorf("setting up the QoS cgroups under %s: %w", o.CgroupRoot, err)
	}
	return cg, nil
}

// newRuntime connects to the container runtime: nothing runs without it,
// so it is checked first. The machine's memory sets the OOM score
// adjustment of Burstable containers. The CRI calls' and the credential
// provider plugins' metrics go into reg.
func (o *Options) newRuntime(ctx context.Context, cg *cgroups.Manager, alloc *allocation.Store, from apiObjects, machine node.Machine, reg metrics.KubeRegistry, log logr.Logger) (*runtime.Runtime, error) {
	records, err := o.pullRecords()
	if err != nil {
		return nil, err
	}
	creds, err := o.ImagePulls.newCredentialProviders(reg, log)
	if err != nil {
		return nil, err
	}
	opts := runtime.Options{
		Endpoint:       o.CRIEndpoint,
		RequestTimeout: o.RuntimeRequestTimeout,
		LogRoot:        o.PodLogDir,
		PodsDir:        filepath.Join(o.RootDir, "pods"),
		Cgroups:        cg,
		Resized:        alloc,
		MemoryCapacity: machine.MemoryBytes,
		Registry:       reg,
		// Always pulls at each start unless the node runs offline-first.
		ImagePullAlwaysIfAbsent: o.ImagePullAlwaysIfAbsent,
		MaxParallelImagePulls:   o.ImagePulls.parallelPulls(),
		// Who may use a present image that the agent pulled.
		PullRecords: records,
		// The node's registry credentials, where the kubelet looks.
		NodeDockerConfigPaths: images.NodeDockerConfigPaths(o.RootDir),
		CredentialProviders:   creds,
		// Localhost seccomp profiles, where the kubelet keeps them.
		SeccompProfileRoot: filepath.Join(o.RootDir, "seccomp"),
		// Volumes relabelled for their containers where SELinux runs.
		SELinuxEnabled: host.SELinuxEnabled(),
		HostIPs:        nodeIPs(o.NodeIP),
		ClusterDNS:     o.ClusterDNS,
		ClusterDomain:  o.ClusterDomain,
		ResolvConf:     o.ResolvConf,
		Logger:         log,
	}
	// Never a nil pointer in an interface: standalone, they stay nil.
	if from.objects != nil {
		opts.Sources, opts.Allocatable = from.objects, from.objects.Allocatable
	}
	if from.services != nil {
		opts.Services, opts.RuntimeClasses = from.services, from.classes
	}
	rt, err := runtime.New(ctx, opts)
	if errors.Is(err, runtime.ErrRuntimeUnavailable) {
		return nil, fmt.Errorf("%w (is containerd running? set --cri-endpoint)", err)
	}
	if err != nil {
		return nil, err
	}
	// Images may have gone while the agent was down.
	prunePullRecords(rt, log)(ctx)
	return rt, nil
}

// newVolumes builds the pods' volumes; those of pods from the apiserver
// read their objects through from.
func (o *Options) newVolumes(from apiObjects, log logr.Logger) (*volumes.Manager, error) {
	opts := volumes.Options{RootDir: o.RootDir, Logger: log}
	if from.objects != nil {
		opts.Sources, opts.Allocatable = from.objects, from.objects.Allocatable
	}
	return volumes.New(opts)
}

// nodeIPs are the node's IPs for the pods' statuses: --node-ip, or the
// address the Node reports as its InternalIP.
func nodeIPs(configured string) []string {
	if ip := node.InternalIP(net.ParseIP(configured)); ip != nil {
		return []string{ip.String()}
	}
	return nil
}
