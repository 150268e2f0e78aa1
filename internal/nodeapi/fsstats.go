package nodeapi

import (
	"context"
	"math"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodeagent/nodeagent/internal/eviction"
	"github.com/nodeagent/nodeagent/internal/host"
	"github.com/nodeagent/nodeagent/internal/runtime"
)

// The filesystem figures of /stats/summary, as the kubelet gives them
// from the CRI: the node's filesystem (the root directory's), the image
// filesystem (its size from statfs, its use from the runtime's
// ImageFsInfo), each container's writable layer (rootfs, against the
// image filesystem) and logs (against the node's), and each pod's
// ephemeral storage: its containers' layers and logs and its emptyDirs
// on disk, each emptyDir a volume of its own.

// filesystems are the node's and the image filesystem's figures of one
// request; either is nil when it could not be read.
type filesystems struct {
	node, image *statsv1alpha1.FsStats
}

// readFilesystems measures the node's and the image filesystem; a
// failure leaves that one out, as the kubelet leaves out what cAdvisor
// could not read.
func (s *Server) readFilesystems(ctx context.Context) filesystems {
	var fss filesystems
	now := metav1.Now()
	if st, err := host.StatFS(s.opts.RootDir); err != nil {
		s.log.V(2).Info("measuring the node's filesystem", "err", err)
	} else {
		fss.node = fsStats(st, now)
	}
	img, err := s.opts.Runtime.ImageFilesystem(ctx)
	if err != nil {
		s.log.V(2).Info("reading the image filesystem", "err", err)
		return fss
	}
	if st, err := host.StatFS(img.Mountpoint); err != nil {
		s.log.V(2).Info("measuring the image filesystem", "err", err)
	} else {
		fss.image = fsStats(st, now)
		fss.image.UsedBytes = &img.UsedBytes
	}
	return fss
}

// fsStats are a filesystem's figures; used is what is neither available
// nor reserved for root, as df counts it.
func fsStats(st host.FSStats, at metav1.Time) *statsv1alpha1.FsStats {
	capacity, available := nonNegative(st.Capacity), nonNegative(st.Available)
	inodes, free := nonNegative(st.Inodes), nonNegative(st.InodesFree)
	used, inodesUsed := capacity-min(available, capacity), inodes-min(free, inodes)
	return &statsv1alpha1.FsStats{
		Time: at, CapacityBytes: &capacity, AvailableBytes: &available, UsedBytes: &used,
		Inodes: &inodes, InodesFree: &free, InodesUsed: &inodesUsed,
	}
}

// usage is a use of bytes on fs: its capacity and availability, with
// used of its own.
func usage(fs *statsv1alpha1.FsStats, used uint64, at metav1.Time) *statsv1alpha1.FsStats {
	st := &statsv1alpha1.FsStats{Time: at, UsedBytes: &used}
	if fs != nil {
		st.CapacityBytes, st.AvailableBytes = fs.CapacityBytes, fs.AvailableBytes
	}
	return st
}

// containerFs are a running container's rootfs (its writable layer) and
// logs (its log directory, rotated files too), and their sum.
func (s *Server) containerFs(fss filesystems, pod *corev1.Pod, c runtime.ContainerUsage, at metav1.Time) (rootfs, logs *statsv1alpha1.FsStats, sum uint64) {
	rootfs = usage(fss.image, c.WritableLayer, at)
	if pod == nil {
		return rootfs, nil, c.WritableLayer
	}
	logBytes := nonNegative(host.FilesSize(filepath.Join(s.opts.Runtime.PodLogDir(pod), c.Name)))
	return rootfs, usage(fss.node, logBytes, at), c.WritableLayer + logBytes
}

// volumes are the pod's emptyDirs on disk, measured, and their sum; a
// volume that could not be measured is left out.
func (s *Server) volumes(fss filesystems, pod *corev1.Pod, at metav1.Time) ([]statsv1alpha1.VolumeStats, uint64) {
	if pod == nil || s.opts.VolumeUsage == nil {
		return nil, 0
	}
	var out []statsv1alpha1.VolumeStats
	var sum uint64
	for _, v := range pod.Spec.Volumes {
		if !eviction.DiskEmptyDir(v) {
			continue
		}
		used, err := s.opts.VolumeUsage(pod.UID, v.Name)
		if err != nil {
			s.log.V(2).Info("measuring an emptyDir", "pod", pod.Namespace+"/"+pod.Name, "volume", v.Name, "err", err)
			continue
		}
		b := nonNegative(used)
		sum += b
		out = append(out, statsv1alpha1.VolumeStats{Name: v.Name, FsStats: *usage(fss.node, b, at)})
	}
	return out, sum
}

func nonNegative(n int64) uint64 {
	return uint64(max(min(n, math.MaxInt64), 0)) // #nosec G115 -- not negative
}
