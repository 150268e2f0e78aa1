package volumes

import (
	"fmt"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// memorySize is the size of a memory-backed volume (an emptyDir of medium
// Memory; a secret, projected or downwardAPI volume, whose sizeLimit is
// nil), as the kubelet sizes it: the smallest of the node's allocatable
// memory, the pod's memory limit (when every container has one) and the
// volume's sizeLimit, each counted only when above zero. 0 means no bound
// is known (the kernel's tmpfs default then applies: half the RAM).
func memorySize(pod *corev1.Pod, sizeLimit, allocatable *resource.Quantity) int64 {
	var size int64
	smaller := func(q *resource.Quantity) {
		if q == nil {
			return
		}
		if n := q.Value(); n > 0 && (size == 0 || n < size) {
			size = n
		}
	}
	smaller(allocatable)
	smaller(podMemoryLimit(pod))
	smaller(sizeLimit)
	return size
}

// podMemoryLimit is the most memory the pod's containers may use at once:
// the app containers' and sidecars' limits added up, or an init
// container's limit (with the sidecars started before it) if larger; nil
// if a container has none.
func podMemoryLimit(pod *corev1.Pod) *resource.Quantity {
	limit := func(c *corev1.Container) (int64, bool) {
		q, ok := c.Resources.Limits[corev1.ResourceMemory]
		return q.Value(), ok && q.Value() > 0
	}
	var sidecars, peak int64
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		n, ok := limit(c)
		if !ok {
			return nil
		}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars += n
			continue
		}
		peak = max(peak, sidecars+n)
	}
	app := sidecars
	for i := range pod.Spec.Containers {
		n, ok := limit(&pod.Spec.Containers[i])
		if !ok {
			return nil
		}
		app += n
	}
	return resource.NewQuantity(max(peak, app), resource.BinarySI)
}

// mountTmpfs makes path a tmpfs of at most size bytes (0: the kernel's
// default) whose root has mode (permission, setgid and sticky bits, as
// chmod takes them), unless it already is a mount point. path must be
// clean and free of symlinks.
func mountTmpfs(path string, size int64, mode uint32) error {
	points, err := mountPoints(path)
	if err != nil {
		return err
	}
	if slices.Contains(points, path) {
		return nil
	}
	opts := "mode=" + strconv.FormatUint(uint64(mode&0o7777), 8)
	if size > 0 {
		opts += ",size=" + strconv.FormatInt(size, 10)
	}
	if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mounting a tmpfs (%s) on %s: %w", opts, path, err)
	}
	return nil
}
