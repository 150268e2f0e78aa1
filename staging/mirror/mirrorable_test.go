package mirror

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func plainPod() *corev1.Pod {
	pod := staticPod("h1")
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	pod.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "PLAIN", Value: "v"},
		{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
	}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "data", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/etcd"}}},
		{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}},
		{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{DownwardAPI: &corev1.DownwardAPIProjection{}}}}}},
		{Name: "defaulted"}, // the apiserver makes it an emptyDir
	}
	return pod
}

func TestPlainPodIsMirrorable(t *testing.T) {
	if err := CheckMirrorable(plainPod()); err != nil {
		t.Errorf("CheckMirrorable(plain pod) = %v, want nil", err)
	}
}

func TestCheckMirrorableRefusesAPIReferences(t *testing.T) {
	ref := corev1.LocalObjectReference{Name: "x"}
	yes := true
	volume := func(src corev1.VolumeSource) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "v", VolumeSource: src})
		}
	}
	projected := func(src corev1.VolumeProjection) func(*corev1.Pod) {
		return volume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{}}, src}}})
	}
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Pod)
		path   string // the field named in the error
		kind   string // what the error says is referenced
	}{
		{"service account", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "sa" },
			"spec.serviceAccountName", "service accounts"},
		{"deprecated service account", func(p *corev1.Pod) { p.Spec.DeprecatedServiceAccount = "sa" },
			"spec.serviceAccount", "service accounts"},
		{"image pull secret", func(p *corev1.Pod) {
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{}, ref}
		}, "spec.imagePullSecrets[1]", "secrets"},
		{"resource claim", func(p *corev1.Pod) {
			p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu"}}
		}, "spec.resourceClaims[0]", "resource claims"},
		{"env secretKeyRef, optional too", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "S", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref, Key: "k", Optional: &yes}}})
		}, "spec.containers[0].env[2].valueFrom.secretKeyRef", "secrets"},
		{"env configMapKeyRef", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "C", ValueFrom: &corev1.EnvVarSource{
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref, Key: "k"}}})
		}, "spec.containers[0].env[2].valueFrom.configMapKeyRef", "config maps"},
		{"envFrom secretRef in an init container", func(p *corev1.Pod) {
			p.Spec.InitContainers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ref}}}
		}, "spec.initContainers[0].envFrom[0].secretRef", "secrets"},
		{"envFrom configMapRef", func(p *corev1.Pod) {
			p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref}}}
		}, "spec.containers[0].envFrom[0].configMapRef", "config maps"},
		{"ephemeral container env", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Env: []corev1.EnvVar{{Name: "S", ValueFrom: &corev1.EnvVarSource{
					SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref, Key: "k"}}}}}}}
		}, "spec.ephemeralContainers[0].env[0].valueFrom.secretKeyRef", "secrets"},
		{"init containers come before containers", func(p *corev1.Pod) {
			p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ref}}}
			p.Spec.InitContainers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref}}}
		}, "spec.initContainers[0].envFrom[0].configMapRef", "config maps"},
		{"secret volume", volume(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "x"}}),
			"spec.volumes[5].secret", "secrets"},
		{"configMap volume", volume(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref}}),
			"spec.volumes[5].configMap", "config maps"},
		{"cephfs secretRef", volume(corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{SecretRef: &ref}}),
			"spec.volumes[5].cephfs.secretRef", "secrets"},
		{"cinder secretRef", volume(corev1.VolumeSource{Cinder: &corev1.CinderVolumeSource{SecretRef: &ref}}),
			"spec.volumes[5].cinder.secretRef", "secrets"},
		{"flexVolume secretRef", volume(corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{SecretRef: &ref}}),
			"spec.volumes[5].flexVolume.secretRef", "secrets"},
		{"iscsi secretRef", volume(corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{SecretRef: &ref}}),
			"spec.volumes[5].iscsi.secretRef", "secrets"},
		{"rbd secretRef", volume(corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{SecretRef: &ref}}),
			"spec.volumes[5].rbd.secretRef", "secrets"},
		{"scaleIO secretRef", volume(corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{SecretRef: &ref}}),
			"spec.volumes[5].scaleIO.secretRef", "secrets"},
		{"storageos secretRef", volume(corev1.VolumeSource{StorageOS: &corev1.StorageOSVolumeSource{SecretRef: &ref}}),
			"spec.volumes[5].storageos.secretRef", "secrets"},
		{"azureFile", volume(corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{SecretName: "x"}}),
			"spec.volumes[5].azureFile.secretName", "secrets"},
		{"CSI with a publish secret", volume(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: &ref}}),
			"spec.volumes[5].csi.nodePublishSecretRef", "secrets"},
		{"CSI", volume(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}),
			"spec.volumes[5].csi", "CSI drivers"},
		{"glusterfs", volume(corev1.VolumeSource{Glusterfs: &corev1.GlusterfsVolumeSource{EndpointsName: "e"}}),
			"spec.volumes[5].glusterfs", "endpoints"},
		{"persistentVolumeClaim", volume(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}),
			"spec.volumes[5].persistentVolumeClaim", "persistent volume claims"},
		{"ephemeral", volume(corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}),
			"spec.volumes[5].ephemeral", "persistent volume claims"},
		{"projected secret", projected(corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: ref}}),
			"spec.volumes[5].projected.sources[1].secret", "secrets"},
		{"projected secret without a name", projected(corev1.VolumeProjection{Secret: &corev1.SecretProjection{}}),
			"spec.volumes[5].projected.sources[1].secret", "secrets"},
		{"projected configMap", projected(corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref}}),
			"spec.volumes[5].projected.sources[1].configMap", "config maps"},
		{"projected serviceAccountToken", projected(corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}),
			"spec.volumes[5].projected.sources[1].serviceAccountToken", "service accounts"},
		{"projected clusterTrustBundle", projected(corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Path: "b"}}),
			"spec.volumes[5].projected.sources[1].clusterTrustBundle", "cluster trust bundles"},
		{"projected podCertificate", projected(corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{SignerName: "s"}}),
			"spec.volumes[5].projected.sources[1].podCertificate", "pod certificates"},
		{"projected source of no known kind", projected(corev1.VolumeProjection{}),
			"spec.volumes[5].projected.sources[1]", "does not know"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := plainPod()
			tc.mutate(pod)
			err := CheckMirrorable(pod)
			if !errors.Is(err, ErrNotMirrorable) {
				t.Fatalf("CheckMirrorable = %v, want ErrNotMirrorable", err)
			}
			prefix := ErrNotMirrorable.Error() + ": " + tc.path + ": "
			if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.kind) {
				t.Errorf("error = %q, want it to start with %q and name %q", msg, prefix, tc.kind)
			}
		})
	}
}

// NodeRestriction skips references with an empty name; so does the check.
func TestEmptyNamesAreNotReferences(t *testing.T) {
	pod := plainPod()
	pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{}}
	pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, corev1.EnvVar{Name: "S", ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}})
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "ceph", VolumeSource: corev1.VolumeSource{
		CephFS: &corev1.CephFSVolumeSource{SecretRef: &corev1.LocalObjectReference{}}}})
	if err := CheckMirrorable(pod); err != nil {
		t.Errorf("CheckMirrorable = %v, want nil", err)
	}
}

// Every volume source and projection of this k8s.io/api is classified: a
// new one after an upgrade fails here until it is placed in a list.
func TestEverySourceIsClassified(t *testing.T) {
	p := field.NewPath("v")
	each := func(t *testing.T, typ reflect.Type, check func(reflect.Value) string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Type.Kind() != reflect.Pointer {
				t.Fatalf("%s.%s is not a pointer; the check assumes one source per pointer", typ.Name(), f.Name)
			}
			v := reflect.New(typ).Elem()
			v.Field(i).Set(reflect.New(f.Type.Elem()))
			if what := check(v); strings.Contains(what, "does not know") {
				t.Errorf("%s.%s is not classified: %s", typ.Name(), f.Name, what)
			}
		}
	}
	each(t, reflect.TypeFor[corev1.VolumeSource](), func(v reflect.Value) string {
		src := v.Interface().(corev1.VolumeSource)
		_, what := volumeReference(&src, p)
		return what
	})
	each(t, reflect.TypeFor[corev1.VolumeProjection](), func(v reflect.Value) string {
		_, what := projectionReference([]corev1.VolumeProjection{v.Interface().(corev1.VolumeProjection)}, p)
		return what
	})
}
