package runtime

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func secretKey(optional *bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k", Optional: optional}}
}

func configMapKey(optional *bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Key: "k", Optional: optional}}
}

func fromSecret(optional *bool) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Optional: optional}}
}

func fromConfigMap(optional *bool) corev1.EnvFromSource {
	return corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Optional: optional}}
}

func fromSource(source podtypes.Source) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Annotations = map[string]string{podtypes.ConfigSourceAnnotationKey: string(source)}
	}
}

func TestContainerEnv(t *testing.T) {
	yes, no := true, false
	nodeName := &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}
	for _, tc := range []struct {
		name    string
		source  podtypes.Source
		env     []corev1.EnvVar
		envFrom []corev1.EnvFromSource
		want    map[string]string // nil when ErrUnsupported is wanted
	}{
		{
			name:   "plain and fieldRef values",
			source: podtypes.FileSource,
			env:    []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "NODE", ValueFrom: nodeName}},
			want:   map[string]string{"A": "1", "NODE": "node1"},
		},
		{
			name:   "optional keys of a static pod are unset",
			source: podtypes.FileSource,
			env: []corev1.EnvVar{
				{Name: "A", Value: "1"}, {Name: "S", ValueFrom: secretKey(&yes)},
				{Name: "C", ValueFrom: configMapKey(&yes)}, {Name: "NODE", ValueFrom: nodeName},
			},
			want: map[string]string{"A": "1", "NODE": "node1"},
		},
		{
			name:    "optional envFrom of a static pod adds nothing",
			source:  podtypes.HTTPSource,
			env:     []corev1.EnvVar{{Name: "A", Value: "1"}},
			envFrom: []corev1.EnvFromSource{fromSecret(&yes), fromConfigMap(&yes)},
			want:    map[string]string{"A": "1"},
		},
		{name: "required secret key of a static pod", source: podtypes.FileSource,
			env: []corev1.EnvVar{{Name: "S", ValueFrom: secretKey(nil)}}},
		{name: "optional: false config map key of a static pod", source: podtypes.FileSource,
			env: []corev1.EnvVar{{Name: "C", ValueFrom: configMapKey(&no)}}},
		{name: "required envFrom of a static pod", source: podtypes.FileSource,
			envFrom: []corev1.EnvFromSource{fromConfigMap(&yes), fromSecret(nil)}},
		{name: "optional secret key of an API pod is not resolved yet", source: podtypes.APIServerSource,
			env: []corev1.EnvVar{{Name: "S", ValueFrom: secretKey(&yes)}}},
		{name: "optional envFrom of an API pod is not resolved yet", source: podtypes.APIServerSource,
			envFrom: []corev1.EnvFromSource{fromConfigMap(&yes)}},
		{name: "required secret key of an API pod", source: podtypes.APIServerSource,
			env: []corev1.EnvVar{{Name: "S", ValueFrom: secretKey(nil)}}},
		{name: "an optional key beside a fieldRef is not dropped", source: podtypes.FileSource,
			env: []corev1.EnvVar{{Name: "S", ValueFrom: &corev1.EnvVarSource{
				FieldRef: nodeName.FieldRef, SecretKeyRef: secretKey(&yes).SecretKeyRef}}},
			want: map[string]string{"S": "node1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod(fromSource(tc.source), func(p *corev1.Pod) {
				p.Spec.NodeName = "node1"
				p.Spec.Containers[0].Env = tc.env
				p.Spec.Containers[0].EnvFrom = tc.envFrom
			})
			kvs, err := containerEnv(&pod.Spec.Containers[0], podEnv{pod: pod})
			if tc.want == nil {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("containerEnv = %v, %v; want ErrUnsupported", kvs, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, kv := range kvs {
				got[kv.Key] = string(kv.Value)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}
