package objectcache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func ref(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }

// everyReference is a pod that references ConfigMaps and Secrets from every
// place a pod can, some of them twice.
func everyReference() *corev1.Pod {
	env := func(prefix string) ([]corev1.EnvVar, []corev1.EnvFromSource) {
		return []corev1.EnvVar{
				{Name: "PLAIN", Value: "x"},
				{Name: "CM", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref(prefix + "-cm-key"), Key: "k"}}},
				{Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref(prefix + "-secret-key"), Key: "k"}}},
				{Name: "F", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			}, []corev1.EnvFromSource{
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref(prefix + "-cm-from")}},
				{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ref(prefix + "-secret-from")}},
			}
	}
	container := func(prefix string) corev1.Container {
		e, ef := env(prefix)
		return corev1.Container{Name: prefix, Env: e, EnvFrom: ef}
	}
	eph := func(prefix string) corev1.EphemeralContainer {
		e, ef := env(prefix)
		return corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: prefix, Env: e, EnvFrom: ef}}
	}
	vol := func(name string, src corev1.VolumeSource) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: src}
	}
	return &corev1.Pod{Spec: corev1.PodSpec{
		ImagePullSecrets:    []corev1.LocalObjectReference{ref("pull"), ref(""), ref("pull")},
		InitContainers:      []corev1.Container{container("init")},
		Containers:          []corev1.Container{container("main"), container("main")},
		EphemeralContainers: []corev1.EphemeralContainer{eph("debug")},
		Volumes: []corev1.Volume{
			vol("cm", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("vol-cm")}}),
			vol("secret", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol-secret"}}),
			vol("projected", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref("proj-cm")}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: ref("proj-secret")}},
				{DownwardAPI: &corev1.DownwardAPIProjection{}},
			}}}),
			vol("csi", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: &corev1.LocalObjectReference{Name: "csi"}}}),
			vol("azure", corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{SecretName: "azure"}}),
			vol("cephfs", corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{SecretRef: &corev1.LocalObjectReference{Name: "cephfs"}}}),
			vol("cinder", corev1.VolumeSource{Cinder: &corev1.CinderVolumeSource{SecretRef: &corev1.LocalObjectReference{Name: "cinder"}}}),
			vol("flex", corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{SecretRef: &corev1.LocalObjectReference{Name: "flex"}}}),
			vol("iscsi", corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{SecretRef: &corev1.LocalObjectReference{Name: "iscsi"}}}),
			vol("rbd", corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{SecretRef: &corev1.LocalObjectReference{Name: "rbd"}}}),
			vol("scaleio", corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{SecretRef: &corev1.LocalObjectReference{Name: "scaleio"}}}),
			vol("storageos", corev1.VolumeSource{StorageOS: &corev1.StorageOSVolumeSource{SecretRef: &corev1.LocalObjectReference{Name: "storageos"}}}),
			vol("cephfs-no-secret", corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{}}),
			vol("empty", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
		},
	}}
}

func TestReferences(t *testing.T) {
	tests := []struct {
		name      string
		pod       *corev1.Pod
		wantCMs   []string
		wantSecrs []string
	}{
		{name: "no references", pod: &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}},
		{
			name: "every place, deduplicated and sorted",
			pod:  everyReference(),
			wantCMs: []string{
				"debug-cm-from", "debug-cm-key", "init-cm-from", "init-cm-key",
				"main-cm-from", "main-cm-key", "proj-cm", "vol-cm",
			},
			wantSecrs: []string{
				"azure", "cephfs", "cinder", "csi", "debug-secret-from", "debug-secret-key", "flex",
				"init-secret-from", "init-secret-key", "iscsi", "main-secret-from", "main-secret-key",
				"proj-secret", "pull", "rbd", "scaleio", "storageos", "vol-secret",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.wantCMs, ConfigMapNames(tt.pod)); diff != "" {
				t.Errorf("ConfigMapNames (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSecrs, SecretNames(tt.pod)); diff != "" {
				t.Errorf("SecretNames (-want +got):\n%s", diff)
			}
		})
	}
}
