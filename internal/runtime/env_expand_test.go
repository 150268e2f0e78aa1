package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

type fakeServiceEnv struct {
	vars map[string]string
	err  error
}

func (f fakeServiceEnv) ServiceEnv(context.Context, *corev1.Pod) (map[string]string, error) {
	return f.vars, f.err
}

func kvs(pairs ...string) []string { return pairs }

// The container's environment as the kubelet builds it: envFrom first,
// env entries in order, each plain value expanded against what is defined
// before it and then the service variables, and the service variables the
// pod does not define last.
func TestContainerEnvExpansion(t *testing.T) {
	services := fakeServiceEnv{vars: map[string]string{
		"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443", "OVERRIDDEN": "service",
	}}
	sources := fakeSources{configMaps: map[string]*corev1.ConfigMap{"default/app": {
		Data: map[string]string{"FROM_CM": "cm", "CM_REF": "$(A)"}}}}
	node := &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}
	for _, tc := range []struct {
		name     string
		source   podtypes.Source
		env      []corev1.EnvVar
		envFrom  []corev1.EnvFromSource
		services ServiceEnv
		want     []string // key, value, ... in order
	}{
		{name: "references to earlier vars", source: podtypes.FileSource,
			env:  []corev1.EnvVar{{Name: "A", Value: "a"}, {Name: "B", Value: "$(A)-b"}, {Name: "C", Value: "$(B)-$(A)"}},
			want: kvs("A", "a", "B", "a-b", "C", "a-b-a")},
		{name: "a later var is not yet defined", source: podtypes.FileSource,
			env:  []corev1.EnvVar{{Name: "B", Value: "$(A)"}, {Name: "A", Value: "a"}},
			want: kvs("B", "$(A)", "A", "a")},
		{name: "self reference and redefinition", source: podtypes.FileSource,
			env:  []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "A", Value: "$(A)2"}, {Name: "S", Value: "$(S)"}},
			want: kvs("A", "12", "S", "$(S)")},
		{name: "escapes and undefined", source: podtypes.FileSource,
			env:  []corev1.EnvVar{{Name: "A", Value: "a"}, {Name: "E", Value: "$$(A) $(NOPE) $(A $"}},
			want: kvs("A", "a", "E", "$(A) $(NOPE) $(A $")},
		{name: "valueFrom values are not expanded but may be referenced", source: podtypes.FileSource,
			env:  []corev1.EnvVar{{Name: "N", ValueFrom: node}, {Name: "R", Value: "on $(N)"}},
			want: kvs("N", "node1", "R", "on node1")},
		{name: "service vars: referenced, pod's win, the rest appended sorted", source: podtypes.FileSource, services: services,
			env: []corev1.EnvVar{{Name: "URL", Value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
				{Name: "OVERRIDDEN", Value: "pod"}, {Name: "SEES", Value: "$(OVERRIDDEN)"}},
			want: kvs("URL", "https://10.0.0.1:443", "OVERRIDDEN", "pod", "SEES", "pod",
				"KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "443")},
		{name: "a service var referenced before the pod redefines it", source: podtypes.FileSource, services: services,
			env:  []corev1.EnvVar{{Name: "SEES", Value: "$(OVERRIDDEN)"}, {Name: "OVERRIDDEN", Value: "pod"}},
			want: kvs("SEES", "service", "OVERRIDDEN", "pod", "KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "443")},
		{name: "envFrom values are not expanded but may be referenced", source: podtypes.APIServerSource,
			envFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}},
			env:     []corev1.EnvVar{{Name: "A", Value: "a"}, {Name: "X", Value: "$(FROM_CM)/$(CM_REF)"}},
			want:    kvs("CM_REF", "$(A)", "FROM_CM", "cm", "A", "a", "X", "cm/$(A)")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod(fromSource(tc.source), func(p *corev1.Pod) {
				p.Namespace = "default"
				p.Spec.NodeName = "node1"
				p.Spec.Containers[0].Env = tc.env
				p.Spec.Containers[0].EnvFrom = tc.envFrom
			})
			got, err := containerEnv(context.Background(), &pod.Spec.Containers[0], podEnv{pod: pod, sources: sources, services: tc.services})
			if err != nil {
				t.Fatal(err)
			}
			var flat []string
			for _, kv := range got {
				flat = append(flat, kv.Key, string(kv.Value))
			}
			if diff := cmp.Diff(tc.want, flat); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContainerEnvServiceError(t *testing.T) {
	pod := newPod(fromSource(podtypes.APIServerSource))
	_, err := containerEnv(context.Background(), &pod.Spec.Containers[0],
		podEnv{pod: pod, services: fakeServiceEnv{err: errors.New("services not yet read")}})
	if !errors.Is(err, ErrContainerConfig) || WaitingReason(err) != "CreateContainerConfigError" {
		t.Fatalf("err = %v, want ErrContainerConfig", err)
	}
}

func TestExpandCommand(t *testing.T) {
	envs := []*runtimeapi.KeyValue{{Key: "A", Value: []byte("a")}, {Key: "SVC", Value: []byte("10.0.0.1")}}
	for _, tc := range []struct {
		name                  string
		command, args         []string
		wantCommand, wantArgs []string
	}{
		{name: "nothing to expand", command: []string{"sh", "-c"}, args: []string{"echo hi"},
			wantCommand: []string{"sh", "-c"}, wantArgs: []string{"echo hi"}},
		{name: "nil stays nil", args: []string{"$(A)"}, wantArgs: []string{"a"}},
		{name: "command and args", command: []string{"/bin/$(A)"}, args: []string{"$(SVC):$(PORT)", "$$(A)", "$$HOME"},
			wantCommand: []string{"/bin/a"}, wantArgs: []string{"10.0.0.1:$(PORT)", "$(A)", "$HOME"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &corev1.Container{Command: tc.command, Args: tc.args}
			command, args := expandCommand(c, envs)
			if diff := cmp.Diff(tc.wantCommand, command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantArgs, args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}
