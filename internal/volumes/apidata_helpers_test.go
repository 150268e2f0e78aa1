package volumes

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
)

// fakeSources serves ConfigMaps, Secrets and tokens from maps keyed
// "<namespace>/<name>"; anything else is NotFound, as the agent's object
// cache answers. Tests change it between Setups.
type fakeSources struct {
	mu         sync.Mutex
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	token      string
	tokenReqs  []corev1.ServiceAccountTokenProjection
}

func newFakeSources() *fakeSources {
	return &fakeSources{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}, token: "tok-1"}
}

func (f *fakeSources) ConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cm, ok := f.configMaps[ns+"/"+name]; ok {
		return cm.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
}

func (f *fakeSources) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
}

func (f *fakeSources) ServiceAccountToken(_ context.Context, _ *corev1.Pod, p *corev1.ServiceAccountTokenProjection) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenReqs = append(f.tokenReqs, *p)
	if f.token == "" {
		return "", apierrors.NewNotFound(corev1.Resource("serviceaccounts"), "default")
	}
	return f.token, nil
}

func (f *fakeSources) setConfigMap(name string, data map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if data == nil {
		delete(f.configMaps, "default/"+name)
		return
	}
	f.configMaps["default/"+name] = &corev1.ConfigMap{Data: data}
}

// logLines collects what a Manager logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}

func (l *logLines) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func (l *logLines) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func newAPIManager(t *testing.T, src Sources) (*Manager, *logLines) {
	t.Helper()
	logs := &logLines{}
	m, err := New(Options{RootDir: filepath.Join(t.TempDir(), "state"), Sources: src, Logger: logs.logger(),
		Allocatable: func() (corev1.ResourceList, error) {
			return corev1.ResourceList{corev1.ResourceCPU: mustQuantity("4"), corev1.ResourceMemory: mustQuantity("8Gi")}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return m, logs
}

// readVolume reads every file a container sees in the volume at dir, by
// its user-visible path (through the links), with its mode.
func readVolume(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		err := filepath.WalkDir(filepath.Join(dir, e.Name())+"/", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(data)
			return nil
		})
		if err != nil {
			// A top-level file: WalkDir of "name/" fails on a file.
			data, rerr := os.ReadFile(filepath.Join(dir, e.Name()))
			if rerr != nil {
				t.Fatalf("reading %s: %v / %v", e.Name(), err, rerr)
			}
			out[e.Name()] = string(data)
		}
	}
	return out
}

func modeOfFile(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

func ptr[T any](v T) *T { return &v }

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
