package volumes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/downward"
	"github.com/nodeagent/nodeagent/internal/runtime"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Options configure a Manager.
type Options struct {
	// RootDir is the agent's state directory; pods' volumes live under
	// <RootDir>/pods. Required.
	RootDir string
	Logger  logr.Logger

	// Sources reads the ConfigMaps, Secrets and tokens that configMap,
	// secret and projected volumes hold; nil (standalone) refuses those
	// volumes with ErrUnsupportedVolume.
	Sources Sources
	// Allocatable gives the node's allocatable resources, which a
	// downwardAPI resourceFieldRef of a limit a container does not set
	// reports; nil fails such a volume.
	Allocatable downward.Allocatable
}

// Manager sets up and cleans up pods' volumes. Every answer is derived
// from the pod, its sources and the file system; the only state is which
// volumes it has logged as kept on their last content. It is safe for
// concurrent use on different pods.
type Manager struct {
	root        string
	log         logr.Logger
	sources     Sources
	allocatable downward.Allocatable

	mu   sync.Mutex
	kept map[string]bool // "<uid>/<volume>"
}

// New returns a Manager.
func New(opts Options) (*Manager, error) {
	if opts.RootDir == "" {
		return nil, fmt.Errorf("%w: RootDir is required", ErrInvalidOptions)
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	return &Manager{root: filepath.Clean(opts.RootDir), log: opts.Logger.WithName("volumes"),
		sources: opts.Sources, allocatable: opts.Allocatable, kept: map[string]bool{}}, nil
}

// PodDir is the pod's directory: <RootDir>/pods/<uid>.
func (m *Manager) PodDir(uid types.UID) string {
	return filepath.Join(m.root, "pods", string(uid))
}

// EmptyDirPath is where an emptyDir volume of the pod lives.
func (m *Manager) EmptyDirPath(uid types.UID, volume string) string {
	return filepath.Join(m.PodDir(uid), "volumes", "kubernetes.io~empty-dir", volume)
}

// Setup makes the pod's volumes ready (creating emptyDirs, checking or
// creating hostPaths, writing configMap, secret, downwardAPI and projected
// volumes anew when what they hold changed) and returns each container's
// mounts. It is idempotent: call it before every sync; ctx bounds the
// reads of the pod's objects.
func (m *Manager) Setup(ctx context.Context, pod *corev1.Pod) (runtime.ContainerMounts, error) {
	if err := checkUID(pod.UID); err != nil {
		return nil, err
	}
	paths := make(map[string]string, len(pod.Spec.Volumes))
	apiData, hostPaths := map[string]bool{}, map[string]bool{}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		hostPaths[v.Name] = v.HostPath != nil
		var path string
		var err error
		if kind := apiDataKind(v); kind != "" {
			path, err = m.setupAPIData(ctx, pod, v, kind)
			apiData[v.Name] = true
		} else {
			path, err = m.setupVolume(pod, v)
		}
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if v.EmptyDir != nil {
			if err := setFSGroup(path, pod.Spec.SecurityContext); err != nil {
				return nil, fmt.Errorf("pod %s/%s: volume %q: %w", pod.Namespace, pod.Name, v.Name, err)
			}
		}
		paths[v.Name] = path
	}
	mounts := runtime.ContainerMounts{}
	var sub *subPathMounter
	defer func() {
		if sub != nil {
			sub.close()
		}
	}()
	// The volumes the agent made (all but hostPaths) are relabelled for
	// SELinux at their first mount in the pod, as the kubelet relabels
	// them once.
	labelled := map[string]bool{}
	for _, c := range podtypes.Containers(&pod.Spec) {
		for j, vm := range c.VolumeMounts {
			mount, err := resolveMount(paths, vm)
			if apiData[vm.Name] {
				// The agent's own writes only, as the kubelet mounts them.
				mount.ReadOnly = true
			}
			if !hostPaths[vm.Name] && !labelled[vm.Name] {
				mount.SELinuxRelabel, labelled[vm.Name] = true, true
			}
			if err == nil && vm.SubPath != "" {
				if sub == nil {
					sub, err = m.newSubPathMounter(pod.UID)
				}
				if err == nil {
					mount.HostPath, err = sub.mount(c.Name, j, vm, mount.HostPath, apiData[vm.Name])
				}
			}
			if err != nil {
				return nil, fmt.Errorf("pod %s/%s: container %q: %w", pod.Namespace, pod.Name, c.Name, err)
			}
			mounts[c.Name] = append(mounts[c.Name], mount)
		}
	}
	return mounts, nil
}

func (m *Manager) setupVolume(pod *corev1.Pod, v *corev1.Volume) (string, error) {
	uid := pod.UID
	switch {
	case v.EmptyDir != nil:
		if m := v.EmptyDir.Medium; m != corev1.StorageMediumDefault && m != corev1.StorageMediumMemory {
			return "", fmt.Errorf("volume %q: emptyDir medium %q: %w", v.Name, m, ErrUnsupportedVolume)
		}
		if !isPathComponent(v.Name) {
			return "", fmt.Errorf("volume %q: an emptyDir's name must name one directory: %w", v.Name, ErrInvalidMount)
		}
		path := m.EmptyDirPath(uid, v.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return "", fmt.Errorf("volume %q: %w", v.Name, err)
		}
		switch err := os.Mkdir(path, 0o777); { // #nosec G301 -- an emptyDir is writable by any container user, as under the kubelet
		case err == nil:
			// Any user of any container may write an emptyDir; the umask
			// must not decide that. (Only when made: later, its mode is
			// the pod's, setgid from its fsGroup included.)
			if err := os.Chmod(path, 0o777); err != nil { // #nosec G302 -- see above: the umask must not decide it
				return "", fmt.Errorf("volume %q: %w", v.Name, err)
			}
		case !errors.Is(err, fs.ErrExist):
			return "", fmt.Errorf("volume %q: %w", v.Name, err)
		}
		if v.EmptyDir.Medium == corev1.StorageMediumMemory {
			// Sticky, as a tmpfs's root is by default and the kubelet's
			// are: a user removes only their own files.
			if err := mountTmpfs(path, memorySize(pod, v.EmptyDir.SizeLimit, m.allocatableMemory()), unix.S_ISVTX|0o777); err != nil {
				return "", fmt.Errorf("volume %q: %w", v.Name, err)
			}
		}
		return path, nil
	case v.HostPath != nil:
		return checkHostPath(v.Name, v.HostPath)
	}
	return "", fmt.Errorf("volume %q: only emptyDir, hostPath, configMap, secret, downwardAPI and projected volumes are set up: %w", v.Name, ErrUnsupportedVolume)
}

// allocatableMemory is the node's allocatable memory, or nil if unknown
// (standalone, or not read yet).
func (m *Manager) allocatableMemory() *resource.Quantity {
	if m.allocatable == nil {
		return nil
	}
	list, err := m.allocatable()
	if err != nil {
		return nil
	}
	if q, ok := list[corev1.ResourceMemory]; ok {
		return &q
	}
	return nil
}

// resolveMount maps a volumeMount onto its volume's host path; a subPath
// is checked here and resolved by a subPathMounter.
func resolveMount(paths map[string]string, vm corev1.VolumeMount) (runtime.Mount, error) {
	host, ok := paths[vm.Name]
	if !ok {
		return runtime.Mount{}, fmt.Errorf("volumeMount %s: no volume %q: %w", vm.MountPath, vm.Name, ErrInvalidMount)
	}
	if vm.SubPathExpr != "" {
		return runtime.Mount{}, fmt.Errorf("volumeMount %s: subPathExpr: %w", vm.MountPath, ErrUnsupportedVolume)
	}
	if vm.SubPath != "" && (filepath.IsAbs(vm.SubPath) || hasDotDot(vm.SubPath)) {
		return runtime.Mount{}, fmt.Errorf("volumeMount %s: volume %q subPath %q must be relative and stay inside the volume: %w", vm.MountPath, vm.Name, vm.SubPath, ErrInvalidMount)
	}
	readOnly := vm.ReadOnly
	if rro := vm.RecursiveReadOnly; rro != nil {
		switch *rro {
		case corev1.RecursiveReadOnlyEnabled:
			// The runtime would have to make every mount beneath read-only
			// too, and this node's does not say that it can.
			return runtime.Mount{}, fmt.Errorf("volumeMount %s: recursiveReadOnly Enabled: the container runtime does not report recursive read-only mounts: %w", vm.MountPath, ErrUnsupportedVolume)
		case corev1.RecursiveReadOnlyIfPossible:
			readOnly = true // read-only, as the kubelet's where recursion is not possible
		}
	}
	return runtime.Mount{ContainerPath: vm.MountPath, HostPath: host, ReadOnly: readOnly, Propagation: propagation(vm)}, nil
}

// propagation is the volumeMount's mount propagation, "" (None) when
// unset.
func propagation(vm corev1.VolumeMount) corev1.MountPropagationMode {
	if vm.MountPropagation == nil {
		return ""
	}
	return *vm.MountPropagation
}

func hasDotDot(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// Cleanup removes the pod's directory with its emptyDir volumes, after
// unmounting its subPath mounts. Call it only once no container of the
// pod runs. hostPath volumes are never touched. Nothing outside
// <RootDir>/pods/<uid> is removed: the UID must be one, a symlink there is
// removed rather than followed, and nothing is removed while a mount is
// left beneath it.
func (m *Manager) Cleanup(uid types.UID) error {
	if err := checkUID(uid); err != nil {
		return err
	}
	pods, err := m.openPodsDir(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing the volumes of pod %s: %w", uid, err)
	}
	defer pods.Close()
	if err := unmountAll(filepath.Join(pods.Name(), string(uid))); err != nil {
		return fmt.Errorf("removing the volumes of pod %s: %w", uid, err)
	}
	m.forget(uid)
	if err := pods.RemoveAll(string(uid)); err != nil {
		return fmt.Errorf("removing the volumes of pod %s: %w", uid, err)
	}
	return nil
}

// openPodsDir opens <RootDir>/pods by its real path (mountinfo names
// mount points by theirs), creating it if asked.
func (m *Manager) openPodsDir(create bool) (*os.Root, error) {
	dir := filepath.Join(m.root, "pods")
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil { // #nosec G301 -- the pods' directory is traversed by container users, as the kubelet's
			return nil, err
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	return os.OpenRoot(real)
}

// checkUID refuses UIDs that could make PodDir point elsewhere.
func checkUID(uid types.UID) error {
	if err := runtime.CheckUID(uid); err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalidMount)
	}
	return nil
}
