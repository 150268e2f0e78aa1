package volumes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The kinds of volumes the agent writes from API data, by the directory
// the kubelet keeps them in under <pod dir>/volumes.
const (
	configMapDir   = "kubernetes.io~configmap"
	secretDir      = "kubernetes.io~secret" // #nosec G101 -- a directory name, not a credential
	projectedDir   = "kubernetes.io~projected"
	downwardAPIDir = "kubernetes.io~downward-api"
)

// apiDataKind tells which of these kinds v is ("" for none).
func apiDataKind(v *corev1.Volume) string {
	switch {
	case v.ConfigMap != nil:
		return configMapDir
	case v.Secret != nil:
		return secretDir
	case v.Projected != nil:
		return projectedDir
	case v.DownwardAPI != nil:
		return downwardAPIDir
	}
	return ""
}

// setupAPIData writes a configMap, secret, downwardAPI or projected volume
// (atomic.go) and returns its path. A volume already written whose source
// cannot be read now (a deleted object, an apiserver away) keeps its last
// content, as the kubelet's does, and the pod's sync goes on; that is
// logged once per volume until it reads again. A first setup that cannot
// read a required object fails, naming the volume and the object. An
// optional object that is missing adds no file, at any setup: its files
// go when it is deleted, as under the kubelet (the volume cannot tell a
// deletion from an object that never was without keeping state for it).
func (m *Manager) setupAPIData(ctx context.Context, pod *corev1.Pod, v *corev1.Volume, kind string) (string, error) {
	fail := func(err error) (string, error) { return "", fmt.Errorf("volume %q: %w", v.Name, err) }
	if !isPathComponent(v.Name) {
		return fail(fmt.Errorf("the name must name one directory: %w", ErrInvalidMount))
	}
	if readsObjects(v) {
		switch {
		case podtypes.IsStaticPod(pod):
			// The node may read only its API pods' objects, and a static
			// pod must run without the apiserver (staging/manifest refuses
			// these; this holds even if a manifest got past it).
			return fail(fmt.Errorf("a static pod's %s volume cannot read API objects: %w", kindName(kind), ErrUnsupportedVolume))
		case m.sources == nil:
			return fail(fmt.Errorf("%s volumes need connected mode (an apiserver): %w", kindName(kind), ErrUnsupportedVolume))
		}
	}
	want, err := m.payload(ctx, pod, v)
	if err != nil {
		var read *sourceError
		if errors.As(err, &read) {
			if _, serr := os.Lstat(filepath.Join(m.volumeDir(pod.UID, kind, v.Name), dataLink)); serr == nil {
				m.keptOnce(pod.UID, v.Name, err)
				return m.volumeDir(pod.UID, kind, v.Name), nil
			}
		}
		return fail(err)
	}
	m.readAgain(pod.UID, v.Name)
	root, err := m.openVolumeDir(pod, kind, v.Name)
	if err != nil {
		return fail(err)
	}
	defer root.Close()
	own := ownership{gid: -1}
	if sc := pod.Spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		own.gid = int(*sc.FSGroup)
	}
	if err := setDir(root, ".", own); err != nil {
		return fail(err)
	}
	wrote, err := writeAtomic(root, want, own)
	if err != nil {
		return fail(err)
	}
	if wrote {
		// Names only: a Secret's data never goes to the log.
		m.log.V(1).Info("wrote volume", "pod", pod.Namespace+"/"+pod.Name, "volume", v.Name, "files", len(want))
	}
	return root.Name(), nil
}

// payload reads what the volume must hold now.
func (m *Manager) payload(ctx context.Context, pod *corev1.Pod, v *corev1.Volume) (payload, error) {
	b := &payloadBuilder{ctx: ctx, pod: pod, sources: m.sources, allocatable: m.allocatable,
		fsGroup: pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.FSGroup != nil}
	out := payload{}
	var err error
	switch {
	case v.ConfigMap != nil:
		s := v.ConfigMap
		err = b.configMap(s.Name, s.Items, s.Optional, modeOf(s.DefaultMode, defaultMode), out)
	case v.Secret != nil:
		s := v.Secret
		err = b.secret(s.SecretName, s.Items, s.Optional, modeOf(s.DefaultMode, defaultMode), out)
	case v.DownwardAPI != nil:
		err = b.downwardAPI(v.DownwardAPI.Items, modeOf(v.DownwardAPI.DefaultMode, defaultMode), out)
	case v.Projected != nil:
		err = b.projected(v.Projected, out)
	}
	if errors.Is(err, errOptionalMissing) {
		return payload{}, nil
	}
	return out, err
}

// readsObjects tells whether the volume needs Sources: all but a
// downwardAPI volume and a projected one of downwardAPI sources only.
func readsObjects(v *corev1.Volume) bool {
	if v.Projected != nil {
		for _, s := range v.Projected.Sources {
			if s.DownwardAPI == nil {
				return true
			}
		}
		return false
	}
	return v.DownwardAPI == nil
}

func kindName(kind string) string {
	switch kind {
	case configMapDir:
		return "configMap"
	case secretDir:
		return "secret"
	case projectedDir:
		return "projected"
	}
	return "downwardAPI"
}

// volumeDir is where a volume of kind lives.
func (m *Manager) volumeDir(uid types.UID, kind, name string) string {
	return filepath.Join(m.PodDir(uid), "volumes", kind, name)
}

// openVolumeDir creates the volume's directory beneath the pods dir and
// opens it as a root. A secret's or a projected volume's kind directory
// is root's alone (0750): the files' modes are for the pod's containers,
// which reach the volume through its bind mount, not for the host's other
// users. A secret, projected (service account tokens) or downwardAPI
// volume is a tmpfs, as under the kubelet: what it holds never reaches
// the disk. (One an older agent wrote to the disk stays there until its
// pod ends: its containers' bind mounts hold that directory.)
func (m *Manager) openVolumeDir(pod *corev1.Pod, kind, name string) (*os.Root, error) {
	pods, err := m.openPodsDir(true)
	if err != nil {
		return nil, err
	}
	defer pods.Close()
	kindDir := filepath.Join(string(pod.UID), "volumes", kind)
	if err := pods.MkdirAll(kindDir, 0o750); err != nil {
		return nil, err
	}
	if kind == secretDir || kind == projectedDir {
		if err := pods.Chmod(kindDir, 0o750); err != nil {
			return nil, err
		}
	}
	rel := filepath.Join(kindDir, name)
	if err := pods.Mkdir(rel, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	if inMemory(kind) {
		// Not over what is written already (by an older agent): the
		// containers' bind mounts hold that directory.
		if _, err := pods.Lstat(filepath.Join(rel, dataLink)); errors.Is(err, fs.ErrNotExist) {
			if err := mountTmpfs(filepath.Join(pods.Name(), rel), memorySize(pod, nil, m.allocatableMemory()), 0o755); err != nil {
				return nil, err
			}
		}
	}
	return pods.OpenRoot(rel)
}

// inMemory tells whether volumes of kind are kept on a tmpfs.
func inMemory(kind string) bool {
	return kind == secretDir || kind == projectedDir || kind == downwardAPIDir
}

// keptOnce logs, once until the volume reads again, that it keeps its
// last content because its source cannot be read.
func (m *Manager) keptOnce(uid types.UID, volume string, err error) {
	key := string(uid) + "/" + volume
	m.mu.Lock()
	logged := m.kept[key]
	m.kept[key] = true
	m.mu.Unlock()
	if !logged {
		m.log.Info("volume keeps its last content: its source cannot be read", "pod", uid, "volume", volume,
			"notFound", apierrors.IsNotFound(err), "err", err.Error())
	}
}

func (m *Manager) readAgain(uid types.UID, volume string) {
	m.mu.Lock()
	delete(m.kept, string(uid)+"/"+volume)
	m.mu.Unlock()
}

// forget drops what the Manager remembers of a pod.
func (m *Manager) forget(uid types.UID) {
	prefix := string(uid) + "/"
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.kept {
		if len(k) > len(prefix) && k[:len(prefix)] == prefix {
			delete(m.kept, k)
		}
	}
}
