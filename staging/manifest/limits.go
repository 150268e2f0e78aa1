package manifest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxManifestBytes bounds a manifest: a file of the file source, a body of
// the HTTP source, the bytes DecodeManifest and ParseManifest take. 512 KiB
// is below etcd's 1.5 MiB object limit, so a pod from a one-pod manifest
// has room to be mirrored, and far above real static pods (a control plane
// pod is a few KiB). It also bounds the cost of one manifest: decoding a
// legal manifest of this size takes tens of milliseconds and about 25 MiB
// of allocations (BenchmarkParseManifestAtLimit), so no manifest stalls its
// source for long. Sources may be configured lower, never higher.
const MaxManifestBytes = 512 << 10

// The longest lists a manifest may hold. The size bound keeps every list
// finite; these keep a list of cheap items (an env var is a few bytes) from
// turning into thousands of containers, mounts or pods for the runtime.
const (
	maxPodListItems  = 256 // pods in a PodList; a node runs 110 by default
	maxContainers    = 64  // in each of containers and initContainers
	maxVolumes       = 256
	maxEnv           = 1024 // per container
	maxPorts         = 256  // per container
	maxVolumeMounts  = 256  // per container
	maxTolerations   = 256
	maxHostAliases   = 256
	maxSearchDomains = 32 // dnsConfig.searches (resolv.conf takes 32)
)

// checkListLengths refuses lists longer than their bound, naming the field
// and the bound.
func checkListLengths(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	tooMany := func(n, limit int, fp *field.Path) {
		if n > limit {
			errs = append(errs, field.TooMany(fp, n, limit))
		}
	}
	tooMany(len(spec.Containers), maxContainers, p.Child("containers"))
	tooMany(len(spec.InitContainers), maxContainers, p.Child("initContainers"))
	tooMany(len(spec.Volumes), maxVolumes, p.Child("volumes"))
	tooMany(len(spec.Tolerations), maxTolerations, p.Child("tolerations"))
	tooMany(len(spec.HostAliases), maxHostAliases, p.Child("hostAliases"))
	if spec.DNSConfig != nil {
		tooMany(len(spec.DNSConfig.Searches), maxSearchDomains, p.Child("dnsConfig", "searches"))
	}
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i := range list.containers {
			c := &list.containers[i]
			cp := p.Child(list.name).Index(i)
			tooMany(len(c.Env), maxEnv, cp.Child("env"))
			tooMany(len(c.Ports), maxPorts, cp.Child("ports"))
			tooMany(len(c.VolumeMounts), maxVolumeMounts, cp.Child("volumeMounts"))
		}
	}
	return errs
}
