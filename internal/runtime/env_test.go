package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"

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
		sources EnvSources        // nil: standalone
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
		{name: "optional secret key of an API pod, standalone", source: podtypes.APIServerSource,
			env: []corev1.EnvVar{{Name: "S", ValueFrom: secretKey(&yes)}}},
		{name: "optional envFrom of an API pod, standalone", source: podtypes.APIServerSource,
			envFrom: []corev1.EnvFromSource{fromConfigMap(&yes)}},
		{name: "required secret key of an API pod", source: podtypes.APIServerSource,
			env: []corev1.EnvVar{{Name: "S", ValueFrom: secretKey(nil)}}},
		{name: "a static pod reads nothing even with sources", source: podtypes.FileSource, sources: panicSources{},
			env:     []corev1.EnvVar{{Name: "S", ValueFrom: secretKey(&yes)}, {Name: "C", ValueFrom: configMapKey(&yes)}},
			envFrom: []corev1.EnvFromSource{fromSecret(&yes), fromConfigMap(&yes)},
			want:    map[string]string{}},
		{name: "a static pod's required key, with sources", source: podtypes.FileSource, sources: panicSources{},
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
			kvs, err := containerEnv(context.Background(), &pod.Spec.Containers[0], podEnv{pod: pod, sources: tc.sources})
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

// panicSources fails a test that reads an object: static pods never do.
type panicSources struct{}

func (panicSources) ConfigMap(context.Context, string, string) (*corev1.ConfigMap, error) {
	panic("a static pod read a ConfigMap")
}

func (panicSources) Secret(context.Context, string, string) (*corev1.Secret, error) {
	panic("a static pod read a Secret")
}

// fakeSources serves ConfigMaps and Secrets by namespace/name; any other
// is NotFound, as the agent's object cache answers. err, when set, is
// every read's answer.
type fakeSources struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	err        error
}

func (f fakeSources) ConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	if f.err != nil {
		return nil, f.err
	}
	if cm, ok := f.configMaps[ns+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
}

func (f fakeSources) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if f.err != nil {
		return nil, f.err
	}
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
}

func TestContainerEnvAPIPod(t *testing.T) {
	yes := true
	sources := fakeSources{
		configMaps: map[string]*corev1.ConfigMap{"default/app": {
			Data:       map[string]string{"LEVEL": "debug", "SHARED": "from-cm", "bad=key": "x", "dotted.key": "ok"},
			BinaryData: map[string][]byte{"BIN": []byte("raw")},
		}},
		secrets: map[string]*corev1.Secret{"default/creds": {
			Data: map[string][]byte{"PASSWORD": []byte("hunter2"), "SHARED": []byte("from-secret")},
		}},
	}
	cmKey := func(name, key string, optional *bool) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: optional}}
	}
	secKey := func(name, key string, optional *bool) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: optional}}
	}
	cmFrom := func(name, prefix string, optional *bool) corev1.EnvFromSource {
		return corev1.EnvFromSource{Prefix: prefix, ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Optional: optional}}
	}
	secFrom := func(name, prefix string, optional *bool) corev1.EnvFromSource {
		return corev1.EnvFromSource{Prefix: prefix, SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Optional: optional}}
	}
	for _, tc := range []struct {
		name     string
		env      []corev1.EnvVar
		envFrom  []corev1.EnvFromSource
		sources  EnvSources
		want     map[string]string
		wantErr  error
		wantText string
		notFound bool
		// hostNetwork: the pod shares the node's network namespace.
		hostNetwork bool
	}{
		{name: "keys of a ConfigMap and a Secret",
			env: []corev1.EnvVar{{Name: "L", ValueFrom: cmKey("app", "LEVEL", nil)}, {Name: "B", ValueFrom: cmKey("app", "BIN", nil)},
				{Name: "P", ValueFrom: secKey("creds", "PASSWORD", nil)}},
			want: map[string]string{"L": "debug", "B": "raw", "P": "hunter2"}},
		{name: "optional missing object and key are unset",
			env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("ghost", "x", &yes)}, {Name: "B", ValueFrom: secKey("creds", "nokey", &yes)},
				{Name: "C", ValueFrom: secKey("ghost", "x", &yes)}, {Name: "D", ValueFrom: cmKey("app", "nokey", &yes)}, {Name: "E", Value: "e"}},
			want: map[string]string{"E": "e"}},
		{name: "required missing configmap", env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("app-config", "x", nil)}},
			wantErr: ErrContainerConfig, notFound: true, wantText: `container "c": env A: configmap default/app-config: container configuration unresolved: configmaps "app-config" not found`},
		{name: "required missing secret key", env: []corev1.EnvVar{{Name: "A", ValueFrom: secKey("creds", "nokey", nil)}},
			wantErr: ErrContainerConfig, wantText: `env A: secret default/creds has no key "nokey"`},
		{name: "an optional object that cannot be read is not taken for absent", sources: fakeSources{err: errors.New("timeout")},
			env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("app", "LEVEL", &yes)}}, wantErr: ErrContainerConfig, wantText: "timeout"},
		{name: "envFrom with prefix, later source wins, env wins over all, invalid names skipped",
			envFrom: []corev1.EnvFromSource{cmFrom("app", "", nil), secFrom("creds", "", nil), cmFrom("app", "CM_", nil)},
			env:     []corev1.EnvVar{{Name: "LEVEL", Value: "info"}},
			want: map[string]string{"LEVEL": "info", "SHARED": "from-secret", "PASSWORD": "hunter2", "dotted.key": "ok",
				"CM_LEVEL": "debug", "CM_SHARED": "from-cm", "CM_dotted.key": "ok"}},
		{name: "optional missing envFrom adds nothing",
			envFrom: []corev1.EnvFromSource{cmFrom("ghost", "", &yes), secFrom("ghost", "", &yes)}, want: map[string]string{}},
		{name: "required missing envFrom secret", envFrom: []corev1.EnvFromSource{secFrom("ghost", "", nil)},
			wantErr: ErrContainerConfig, notFound: true, wantText: `container "c": envFrom[0]: secret default/ghost`},
		{name: "status.hostIP(s) and resources",
			env: []corev1.EnvVar{
				{Name: "H", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
				{Name: "HS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIPs"}}},
				{Name: "MEM", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
				{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			},
			want: map[string]string{"H": "192.168.0.9", "HS": "192.168.0.9,fd00::9", "MEM": "128", "CPU": "3"}},
		{name: "a host-network pod's IP is the node's", hostNetwork: true,
			env:  []corev1.EnvVar{{Name: "IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
			want: map[string]string{"IP": "192.168.0.9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod(fromSource(podtypes.APIServerSource), func(p *corev1.Pod) {
				p.Spec.HostNetwork = tc.hostNetwork
				p.Namespace = "default"
				p.Spec.Containers[0].Name = "c"
				p.Spec.Containers[0].Env = tc.env
				p.Spec.Containers[0].EnvFrom = tc.envFrom
				p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
			})
			src := tc.sources
			if src == nil {
				src = sources
			}
			env := podEnv{pod: pod, sources: src, hostIPs: []string{"192.168.0.9", "fd00::9"},
				allocatable: func() (corev1.ResourceList, error) {
					return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}, nil
				}}
			kvs, err := containerEnv(context.Background(), &pod.Spec.Containers[0], env)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(fmt.Sprint(err), tc.wantText) {
					t.Fatalf("containerEnv error = %v, want %v saying %q", err, tc.wantErr, tc.wantText)
				}
				if apierrors.IsNotFound(err) != tc.notFound {
					t.Errorf("apierrors.IsNotFound(%v) = %v, want %v", err, !tc.notFound, tc.notFound)
				}
				if WaitingReason(err) != "CreateContainerConfigError" {
					t.Errorf("WaitingReason = %q, want CreateContainerConfigError", WaitingReason(err))
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

// Through SyncPod: an API pod whose required Secret is missing gets no
// container (CreateContainerConfigError naming the Secret, NotFound kept);
// once the Secret exists, the next sync starts it with the value.
func TestSyncPodWaitsForSecret(t *testing.T) {
	w := newWorld(t)
	src := fakeSources{secrets: map[string]*corev1.Secret{}}
	w.rt = newRuntime(Options{Endpoint: "unix:///fake.sock", LogRoot: w.logRoot, Cgroups: testCgroups(w.cgroupFS),
		Logger: testr.New(t), Clock: w.clock, Sources: src, HostIPs: []string{"10.1.2.3"}}, w.cri, w.images)
	pod := newPod(fromSource(podtypes.APIServerSource), func(p *corev1.Pod) {
		p.Namespace = "default"
		p.Spec.Containers[0].Env = []corev1.EnvVar{
			{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}},
			{Name: "HOST", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
		}
	})
	_, err := w.sync(pod, nil)
	if !errors.Is(err, ErrContainerConfig) || !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "secret default/db") {
		t.Fatalf("SyncPod = %v, want ErrContainerConfig, NotFound, naming secret default/db", err)
	}
	if WaitingReason(err) != "CreateContainerConfigError" {
		t.Errorf("WaitingReason = %q", WaitingReason(err))
	}
	for _, call := range w.calls() {
		if call == "CreateContainer" {
			t.Fatal("a container was created without its Secret")
		}
	}
	src.secrets["default/db"] = &corev1.Secret{Data: map[string][]byte{"password": []byte("s3cret")}}
	w.mustSync(pod)
	got := map[string]string{}
	for _, kv := range w.lastContainerConfig().Envs {
		got[kv.Key] = string(kv.Value)
	}
	if got["PW"] != "s3cret" || got["HOST"] != "10.1.2.3" {
		t.Errorf("env = %v, want PW and HOST set", got)
	}
}
