package objectcache

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// ConfigMapNames returns the names of the ConfigMaps a pod references,
// sorted and without duplicates: from the env and envFrom of every init,
// regular and ephemeral container, and from configMap volumes and the
// configMap sources of projected volumes. Optional references count: the
// object may appear later, and the pod must see it when it does.
func ConfigMapNames(pod *corev1.Pod) []string {
	var names []string
	add := func(name string) {
		if name != "" {
			names = append(names, name)
		}
	}
	visitContainerEnv(pod, func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, e := range envFrom {
			if e.ConfigMapRef != nil {
				add(e.ConfigMapRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				add(e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	})
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			add(v.ConfigMap.Name)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					add(s.ConfigMap.Name)
				}
			}
		}
	}
	return sortedUnique(names)
}

// SecretNames returns the names of the Secrets a pod references, sorted and
// without duplicates: its imagePullSecrets, the env and envFrom of every
// init, regular and ephemeral container, secret volumes, the secret sources
// of projected volumes, and the secret references of the volume plugins
// that take one (CSI's nodePublishSecretRef, AzureFile, CephFS, Cinder,
// FlexVolume, iSCSI, RBD, ScaleIO, StorageOS), as the Node authorizer
// counts them.
func SecretNames(pod *corev1.Pod) []string {
	var names []string
	add := func(name string) {
		if name != "" {
			names = append(names, name)
		}
	}
	for _, s := range pod.Spec.ImagePullSecrets {
		add(s.Name)
	}
	visitContainerEnv(pod, func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, e := range envFrom {
			if e.SecretRef != nil {
				add(e.SecretRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				add(e.ValueFrom.SecretKeyRef.Name)
			}
		}
	})
	for _, v := range pod.Spec.Volumes {
		visitVolumeSecretNames(&v.VolumeSource, add)
	}
	return sortedUnique(names)
}

func visitVolumeSecretNames(v *corev1.VolumeSource, add func(string)) {
	switch {
	case v.Secret != nil:
		add(v.Secret.SecretName)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if s.Secret != nil {
				add(s.Secret.Name)
			}
		}
	case v.CSI != nil && v.CSI.NodePublishSecretRef != nil:
		add(v.CSI.NodePublishSecretRef.Name)
	case v.AzureFile != nil:
		add(v.AzureFile.SecretName)
	case v.CephFS != nil && v.CephFS.SecretRef != nil:
		add(v.CephFS.SecretRef.Name)
	case v.Cinder != nil && v.Cinder.SecretRef != nil:
		add(v.Cinder.SecretRef.Name)
	case v.FlexVolume != nil && v.FlexVolume.SecretRef != nil:
		add(v.FlexVolume.SecretRef.Name)
	case v.ISCSI != nil && v.ISCSI.SecretRef != nil:
		add(v.ISCSI.SecretRef.Name)
	case v.RBD != nil && v.RBD.SecretRef != nil:
		add(v.RBD.SecretRef.Name)
	case v.ScaleIO != nil && v.ScaleIO.SecretRef != nil:
		add(v.ScaleIO.SecretRef.Name)
	case v.StorageOS != nil && v.StorageOS.SecretRef != nil:
		add(v.StorageOS.SecretRef.Name)
	}
}

// visitContainerEnv calls f with the env and envFrom of each init, regular
// and ephemeral container.
func visitContainerEnv(pod *corev1.Pod, f func([]corev1.EnvVar, []corev1.EnvFromSource)) {
	for i := range pod.Spec.InitContainers {
		f(pod.Spec.InitContainers[i].Env, pod.Spec.InitContainers[i].EnvFrom)
	}
	for i := range pod.Spec.Containers {
		f(pod.Spec.Containers[i].Env, pod.Spec.Containers[i].EnvFrom)
	}
	for i := range pod.Spec.EphemeralContainers {
		f(pod.Spec.EphemeralContainers[i].Env, pod.Spec.EphemeralContainers[i].EnvFrom)
	}
}

func sortedUnique(names []string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}
