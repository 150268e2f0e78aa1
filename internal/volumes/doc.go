// Package volumes turns a pod's volumes into host paths and its containers'
// volumeMounts into the bind mounts the runtime package creates containers
// with.
//
//	m, err := volumes.New(volumes.Options{RootDir: "/var/lib/nodeagent", Sources: objects})
//	mounts, err := m.Setup(ctx, pod)    // runtime.ContainerMounts, by container name
//	res, err := rt.SyncPod(ctx, pod, mounts, status, hooks)
//	...
//	err = m.Cleanup(pod.UID)            // once the pod is terminated
//
// emptyDir volumes are directories under
// <RootDir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>, world
// writable as the kubelet makes them; they live as long as the pod. hostPath
// volumes are checked (or created) according to their type.
//
// configMap, secret, downwardAPI and projected volumes (configMap, secret,
// downwardAPI and serviceAccountToken sources) hold what Options.Sources
// reads, written under kubernetes.io~configmap, ~secret, ~downward-api and
// ~projected as the kubelet lays them out, and rewritten atomically
// (atomic.go) when it changes; they are mounted read-only. Without Sources
// (standalone) only downwardAPI volumes are set up; the others fail with
// ErrUnsupportedVolume. A written volume whose source cannot be read keeps
// its last content. Secret, projected and downwardAPI volumes are each a
// tmpfs (tmpfs.go), as under the kubelet: Secrets and tokens never reach
// the disk; the directory above secret and projected ones is root's
// (0750). Other volume kinds, and
// subPathExpr, fail with ErrUnsupportedVolume naming the volume.
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
