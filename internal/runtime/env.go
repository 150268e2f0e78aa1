package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/downward"
	"github.com/nodeagent/nodeagent/internal/expand"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// EnvSources reads the ConfigMaps and Secrets an API pod's environment
// names. A missing object is an error for which apierrors.IsNotFound is
// true.
type EnvSources interface {
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// ServiceEnv gives the service environment variables of a pod (see
// internal/serviceenv): the Docker-link style variables of the Services
// the pod may see. An error fails the container's creation with
// ErrContainerConfig.
type ServiceEnv interface {
	ServiceEnv(ctx context.Context, pod *corev1.Pod) (map[string]string, error)
}

// containerEnv resolves a container's environment: plain values, the
// downward API (fieldRef, resourceFieldRef; rules in internal/downward),
// for API pods the ConfigMaps and Secrets named by valueFrom and envFrom,
// read through env.sources, and the service variables of env.services.
// envFrom sources apply in order, a later one winning; env entries win
// over all of them, and over the service variables, which come last. An
// envFrom key that cannot be a variable name (empty, '=' or not printable
// ASCII, the kubelet's relaxed rule) is skipped and logged, as the kubelet
// skips it with a warning.
//
// A plain env value has its $(VAR) references expanded (internal/expand)
// against the variables defined before it (envFrom's and earlier env
// entries) and then the service variables, as the kubelet does; values
// from envFrom and valueFrom are taken as they are.
//
// A required object or key that is missing fails with ErrContainerConfig
// (CreateContainerConfigError), naming the variable and the object; an
// optional one leaves the variable unset, or adds nothing for envFrom.
//
// A static pod cannot read API objects: it must run while the apiserver is
// away, and the node may read only objects of pods bound to it through the
// apiserver. Its manifest may still name a Secret or ConfigMap if the
// reference is optional (staging/manifest refuses required ones), and an
// optional reference resolves as absent without a read. Such a pod cannot
// be mirrored. Without sources (standalone), an API pod's references fail
// with ErrUnsupported.
func containerEnv(ctx context.Context, c *corev1.Container, env podEnv) ([]*runtimeapi.KeyValue, error) {
	static := podtypes.IsStaticPod(env.pod)
	r := envResolver{ctx: ctx, env: env, container: c.Name, static: static}
	vars := map[string]string{}
	for i := range c.EnvFrom {
		if err := r.envFrom(&c.EnvFrom[i], i, vars); err != nil {
			return nil, err
		}
	}
	var services map[string]string
	if env.services != nil {
		var err error
		if services, err = env.services.ServiceEnv(ctx, env.pod); err != nil {
			return nil, fmt.Errorf("container %q: service environment: %w: %w", c.Name, ErrContainerConfig, err)
		}
	}
	fromSources := make([]string, 0, len(vars))
	for k := range vars {
		fromSources = append(fromSources, k)
	}
	slices.Sort(fromSources)
	out := make([]*runtimeapi.KeyValue, 0, len(vars)+len(c.Env)+len(services))
	index := map[string]int{}
	set := func(k, v string) {
		vars[k] = v
		if i, ok := index[k]; ok {
			out[i].Value = []byte(v)
			return
		}
		index[k] = len(out)
		out = append(out, &runtimeapi.KeyValue{Key: k, Value: []byte(v)})
	}
	for _, k := range fromSources {
		set(k, vars[k])
	}
	defined := expand.Maps(vars, services)
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.Value != "" {
			set(e.Name, expand.String(e.Value, defined))
			continue
		}
		v, ok, err := r.valueFrom(e.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("container %q: env %s: %w", c.Name, e.Name, err)
		}
		if ok {
			set(e.Name, v)
		}
	}
	names := make([]string, 0, len(services))
	for k := range services {
		if _, ok := index[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		set(k, services[k])
	}
	return out, nil
}

// expandCommand expands the $(VAR) references of a container's command
// and args against its final environment, as the kubelet does.
func expandCommand(c *corev1.Container, envs []*runtimeapi.KeyValue) (command, args []string) {
	if !hasDollar(c.Command) && !hasDollar(c.Args) {
		return c.Command, c.Args
	}
	vars := make(map[string]string, len(envs))
	for _, kv := range envs {
		vars[kv.Key] = string(kv.Value)
	}
	lookup := expand.Maps(vars)
	return expand.Strings(c.Command, lookup), expand.Strings(c.Args, lookup)
}

func hasDollar(ss []string) bool {
	for _, s := range ss {
		if strings.IndexByte(s, '$') >= 0 {
			return true
		}
	}
	return false
}

type envResolver struct {
	ctx       context.Context
	env       podEnv
	container string
	static    bool
}

// valueFrom resolves one variable's source; ok is false when an optional
// source is absent and the variable stays unset.
func (r *envResolver) valueFrom(vf *corev1.EnvVarSource) (string, bool, error) {
	pod := r.env.pod
	switch {
	case vf.FieldRef != nil:
		podIPs := r.env.ips
		if pod.Spec.HostNetwork && len(podIPs) == 0 {
			podIPs = r.env.hostIPs // a host-network pod's IPs are the node's
		}
		v, err := downward.FieldValue(pod, vf.FieldRef.FieldPath, downward.IPs{Pod: podIPs, Host: r.env.hostIPs})
		if err != nil {
			return "", false, fmt.Errorf("%w: %w", err, ErrUnsupported)
		}
		return v, true, nil
	case vf.ResourceFieldRef != nil:
		v, err := downward.ResourceValue(pod, r.container, vf.ResourceFieldRef, r.env.allocatable)
		if err != nil {
			return "", false, fmt.Errorf("%w: %w", err, ErrContainerConfig)
		}
		return v, true, nil
	case vf.ConfigMapKeyRef != nil:
		ref := vf.ConfigMapKeyRef
		if err := r.readable(ref.Optional); err != nil || r.static {
			return "", false, err
		}
		cm, err := r.env.sources.ConfigMap(r.ctx, pod.Namespace, ref.Name)
		if err != nil {
			return "", false, r.missing("configmap", ref.Name, ref.Optional, err)
		}
		if v, ok := cm.Data[ref.Key]; ok {
			return v, true, nil
		}
		if v, ok := cm.BinaryData[ref.Key]; ok {
			return string(v), true, nil
		}
		return "", false, r.noKey("configmap", ref.Name, ref.Key, ref.Optional)
	case vf.SecretKeyRef != nil:
		ref := vf.SecretKeyRef
		if err := r.readable(ref.Optional); err != nil || r.static {
			return "", false, err
		}
		s, err := r.env.sources.Secret(r.ctx, pod.Namespace, ref.Name)
		if err != nil {
			return "", false, r.missing("secret", ref.Name, ref.Optional, err)
		}
		if v, ok := s.Data[ref.Key]; ok {
			return string(v), true, nil
		}
		return "", false, r.noKey("secret", ref.Name, ref.Key, ref.Optional)
	}
	return "", false, fmt.Errorf("valueFrom names no source this agent resolves: %w", ErrUnsupported)
}

// envFrom adds the keys of one envFrom source to vars.
func (r *envResolver) envFrom(e *corev1.EnvFromSource, i int, vars map[string]string) error {
	pod := r.env.pod
	wrap := func(err error) error {
		return fmt.Errorf("container %q: envFrom[%d]: %w", r.container, i, err)
	}
	var kind, name string
	var optional *bool
	switch {
	case e.ConfigMapRef != nil && e.SecretRef == nil:
		kind, name, optional = "configmap", e.ConfigMapRef.Name, e.ConfigMapRef.Optional
	case e.SecretRef != nil && e.ConfigMapRef == nil:
		kind, name, optional = "secret", e.SecretRef.Name, e.SecretRef.Optional
	default:
		return wrap(fmt.Errorf("names no single ConfigMap or Secret: %w", ErrUnsupported))
	}
	if err := r.readable(optional); err != nil {
		return wrap(err)
	}
	if r.static {
		return nil
	}
	data := map[string]string{}
	if kind == "configmap" {
		cm, err := r.env.sources.ConfigMap(r.ctx, pod.Namespace, name)
		if err != nil {
			if err := r.missing(kind, name, optional, err); err != nil {
				return wrap(err)
			}
			return nil
		}
		for k, v := range cm.Data {
			data[k] = v
		}
	} else {
		s, err := r.env.sources.Secret(r.ctx, pod.Namespace, name)
		if err != nil {
			if err := r.missing(kind, name, optional, err); err != nil {
				return wrap(err)
			}
			return nil
		}
		for k, v := range s.Data {
			data[k] = string(v)
		}
	}
	var invalid []string
	for k, v := range data {
		k = e.Prefix + k
		if len(validation.IsRelaxedEnvVarName(k)) > 0 {
			invalid = append(invalid, k)
			continue
		}
		vars[k] = v
	}
	if len(invalid) > 0 {
		slices.Sort(invalid)
		r.env.log.Info("skipped envFrom keys that are not valid variable names", "pod", pod.Namespace+"/"+pod.Name,
			"container", r.container, kind, pod.Namespace+"/"+name, "keys", strings.Join(invalid, ", "))
	}
	return nil
}

// readable says whether an object reference may be read: a static pod's
// optional one resolves as absent (nil error; the caller reads nothing),
// its required one and any without sources are unsupported.
func (r *envResolver) readable(optional *bool) error {
	switch {
	case r.static && isTrue(optional):
		return nil
	case r.static:
		return fmt.Errorf("a static pod may name only optional ConfigMaps and Secrets: %w", ErrUnsupported)
	case r.env.sources == nil:
		return fmt.Errorf("ConfigMaps and Secrets need connected mode (an apiserver): %w", ErrUnsupported)
	}
	return nil
}

// missing turns a failed read into the variable's outcome: an optional
// object that does not exist is absent (nil error), anything else fails
// the container's creation, keeping the cause for apierrors.IsNotFound.
func (r *envResolver) missing(kind, name string, optional *bool, err error) error {
	if isTrue(optional) && apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("%s %s/%s: %w: %w", kind, r.env.pod.Namespace, name, ErrContainerConfig, err)
}

func (r *envResolver) noKey(kind, name, key string, optional *bool) error {
	if isTrue(optional) {
		return nil
	}
	return fmt.Errorf("%s %s/%s has no key %q: %w", kind, r.env.pod.Namespace, name, key, ErrContainerConfig)
}

func isTrue(b *bool) bool { return b != nil && *b }
