package volumes

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// setFSGroup gives a volume to the pod's fsGroup as the kubelet does for
// the volumes that take it (emptyDir; never hostPath, which belongs to
// the host): every file's group becomes the fsGroup and gains read and
// write, and directories gain the setgid bit so that new files inherit
// the group.
//
// The kubelet does this when it mounts the volume: with
// fsGroupChangePolicy Always at every mount, with OnRootMismatch only when
// the root lacks the group. Setup runs before every sync, so here the walk
// happens when the root lacks the group (the volume is new, or was
// changed behind the pod's back), whatever the policy; otherwise only the
// root's bits are restored. For an emptyDir, which the agent creates and
// only the pod writes, both policies come to the same.
func setFSGroup(root string, sc *corev1.PodSecurityContext) error {
	if sc == nil || sc.FSGroup == nil {
		return nil
	}
	gid := int(*sc.FSGroup)
	if info, err := os.Stat(root); err == nil && fileGID(info) == gid {
		const want = os.ModeSetgid | 0o070
		if info.Mode()&want == want {
			return nil
		}
		return os.Chmod(root, info.Mode()|want)
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(path, -1, gid); err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil // its target may be anywhere
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := info.Mode() | 0o060
		if d.IsDir() {
			mode |= os.ModeSetgid | 0o010
		}
		if mode == info.Mode() {
			return nil
		}
		return os.Chmod(path, mode)
	})
	if err != nil {
		return fmt.Errorf("fsGroup %d: %w", gid, err)
	}
	return nil
}

func fileGID(info fs.FileInfo) int {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int(st.Gid)
	}
	return -1
}
