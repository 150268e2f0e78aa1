// Package volumes turns a pod's volumes into host paths and its containers'
// volumeMounts into the bind mounts the runtime package creates containers
// with.
//
//	m, err := volumes.New(volumes.Options{RootDir: "/var/lib/nodeagent"})
//	mounts, err := m.Setup(pod)         // runtime.ContainerMounts, by container name
//	res, err := rt.SyncPod(ctx, pod, mounts, status)
//	...
//	err = m.Cleanup(pod.UID)            // once the pod is terminated
//
// emptyDir volumes are directories under
// <RootDir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>, world
// writable as the kubelet makes them; they live as long as the pod. hostPath
// volumes are checked (or created) according to their type. Other volume
// kinds (configMap, secret, projected, ...) are not handled here yet: Setup
// fails with ErrUnsupportedVolume naming the volume.
package volumes
