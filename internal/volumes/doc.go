// Package volumes turns a pod's volumes into host paths and its containers'
// volumeMounts into the bind mounts the runtime package creates containers
// with.
//
//	m, err := volumes.New(volumes.Options{RootDir: "/var/lib/nodeagent"})
//	mounts, err := m.Setup(pod)         // runtime.ContainerMounts, by container name
//	res, err := rt.SyncPod(ctx, pod, mounts, status, hooks)
//	...
//	err = m.Cleanup(pod.UID)            // once the pod is terminated
//
// emptyDir volumes are directories under
// <RootDir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>, world
// writable as the kubelet makes them; they live as long as the pod. hostPath
// volumes are checked (or created) according to their type. Other volume
// kinds (configMap, secret, projected, ...) are not handled here yet: Setup
// fails with ErrUnsupportedVolume naming the volume, as does subPathExpr.
//
// A subPath is resolved beneath its volume, symlinks the pod's containers
// may have planted included, and never leads out of it: the runtime gets a
// bind mount of what was resolved, under
// <RootDir>/pods/<uid>/volume-subpaths, instead of a path it would follow
// (subpath.go). A subPath that leaves its volume fails Setup with
// ErrInvalidMount naming the volume and the subPath. Cleanup unmounts
// those mounts before it removes the pod's directory, and removes nothing
// outside it.
package volumes
