package manifest

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The core/v1 defaults the apiserver applies to a pod, for the fields that
// matter to a node: with them applied, two manifests that differ only in
// spelled-out defaults decode to the same pod and hash the same. The
// scheme's generated defaulters live in k8s.io/kubernetes, which cannot be
// imported, so the relevant ones are restated here.

const (
	defaultTerminationGracePeriod = int64(30)
	defaultSchedulerName          = "default-scheduler"
	defaultFileMode               = int32(0o644)
)

// wellKnownPriorities are the system priority classes every cluster has.
// A static pod naming one gets its value, as admission would give its
// mirror pod, so the agent can order pods by priority without the API.
var wellKnownPriorities = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

// setPodDefaults fills in the defaults of pod in place.
func setPodDefaults(pod *corev1.Pod) {
	spec := &pod.Spec
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = defaultSchedulerName
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = new(defaultTerminationGracePeriod)
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.ServiceAccountName == "" {
		// The deprecated alias, as the apiserver copies it.
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = new(corev1.DefaultEnableServiceLinks)
	}
	if p, ok := wellKnownPriorities[spec.PriorityClassName]; ok && spec.Priority == nil {
		spec.Priority = new(p)
	}
	for i := range spec.InitContainers {
		setContainerDefaults(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		setContainerDefaults(&spec.Containers[i], spec.HostNetwork)
	}
	for i := range spec.Volumes {
		setVolumeDefaults(&spec.Volumes[i])
	}
}

func setContainerDefaults(c *corev1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		// On the host network a container port is a host port.
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
			vf.FieldRef.APIVersion = "v1"
		}
	}
	// Limits without requests request the limits.
	if len(c.Resources.Limits) > 0 {
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		for name, q := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[name]; !ok {
				c.Resources.Requests[name] = q.DeepCopy()
			}
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		setProbeDefaults(p)
	}
	if c.Lifecycle != nil {
		for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil {
				setHTTPGetDefaults(h.HTTPGet)
			}
		}
	}
}

// defaultPullPolicy is Always for an image without a tag or tagged latest
// (it may move), IfNotPresent otherwise (a digest or a fixed tag).
func defaultPullPolicy(image string) corev1.PullPolicy {
	if strings.Contains(image, "@") {
		return corev1.PullIfNotPresent
	}
	tag := ""
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		tag = image[i+1:]
	}
	if tag == "" || tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

func setProbeDefaults(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	setHTTPGetDefaults(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = new("")
	}
}

func setHTTPGetDefaults(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = corev1.URISchemeHTTP
	}
}

func setVolumeDefaults(v *corev1.Volume) {
	if volumeSourceCount(&v.VolumeSource) == 0 {
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if hp := v.HostPath; hp != nil && hp.Type == nil {
		hp.Type = new(corev1.HostPathUnset)
	}
	if d := v.DownwardAPI; d != nil {
		if d.DefaultMode == nil {
			d.DefaultMode = new(defaultFileMode)
		}
		setDownwardDefaults(d.Items)
	}
	if pr := v.Projected; pr != nil {
		if pr.DefaultMode == nil {
			pr.DefaultMode = new(defaultFileMode)
		}
		for _, s := range pr.Sources {
			if s.DownwardAPI != nil {
				setDownwardDefaults(s.DownwardAPI.Items)
			}
		}
	}
}

func setDownwardDefaults(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if f := items[i].FieldRef; f != nil && f.APIVersion == "" {
			f.APIVersion = "v1"
		}
	}
}
