package mirror

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CheckMirrorable reports whether a node identity may create a mirror of
// pod: it returns nil, or an error matching ErrNotMirrorable that names the
// first field NodeRestriction would refuse and why. A node may create only
// pods that reference no other API object, since the Node authorizer grants
// it only the objects of pods already bound to it; a refused create is a
// 403, so the caller checks first and runs the static pod unmirrored.
//
// Fields are visited in this order: service account, image pull secrets,
// resource claims, init, regular and ephemeral containers (env, then
// envFrom), volumes. Volume types the apiserver does not know as free of
// API references are refused, as NodeRestriction refuses them. A reference
// with an empty name is ignored, as NodeRestriction ignores it (validation
// refuses such a pod on its own).
func CheckMirrorable(pod *corev1.Pod) error {
	if path, what := firstAPIReference(&pod.Spec, field.NewPath("spec")); path != nil {
		return fmt.Errorf("%w: %s: %s", ErrNotMirrorable, path, what)
	}
	return nil
}

// refuses is the reason for a reference to objects of the given kind.
func refuses(kind string) string {
	return "a mirror pod may not reference " + kind + " (NodeRestriction refuses it)"
}

func firstAPIReference(spec *corev1.PodSpec, p *field.Path) (*field.Path, string) {
	if spec.ServiceAccountName != "" {
		return p.Child("serviceAccountName"), refuses("service accounts")
	}
	// The apiserver defaults serviceAccountName from the deprecated alias.
	if spec.DeprecatedServiceAccount != "" {
		return p.Child("serviceAccount"), refuses("service accounts")
	}
	for i, s := range spec.ImagePullSecrets {
		if s.Name != "" {
			return p.Child("imagePullSecrets").Index(i), refuses("secrets")
		}
	}
	if len(spec.ResourceClaims) > 0 {
		return p.Child("resourceClaims").Index(0), refuses("resource claims")
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if fp, what := envReference(c.Env, c.EnvFrom, p.Child("initContainers").Index(i)); fp != nil {
			return fp, what
		}
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if fp, what := envReference(c.Env, c.EnvFrom, p.Child("containers").Index(i)); fp != nil {
			return fp, what
		}
	}
	for i := range spec.EphemeralContainers {
		c := &spec.EphemeralContainers[i]
		if fp, what := envReference(c.Env, c.EnvFrom, p.Child("ephemeralContainers").Index(i)); fp != nil {
			return fp, what
		}
	}
	for i := range spec.Volumes {
		if fp, what := volumeReference(&spec.Volumes[i].VolumeSource, p.Child("volumes").Index(i)); fp != nil {
			return fp, what
		}
	}
	return nil, ""
}

// envReference finds a container's first secret or config map reference.
// Optional references count too: the apiserver does not look at optional.
func envReference(env []corev1.EnvVar, envFrom []corev1.EnvFromSource, p *field.Path) (*field.Path, string) {
	for j, e := range env {
		vf := e.ValueFrom
		switch {
		case vf == nil:
		case vf.SecretKeyRef != nil && vf.SecretKeyRef.Name != "":
			return p.Child("env").Index(j).Child("valueFrom", "secretKeyRef"), refuses("secrets")
		case vf.ConfigMapKeyRef != nil && vf.ConfigMapKeyRef.Name != "":
			return p.Child("env").Index(j).Child("valueFrom", "configMapKeyRef"), refuses("config maps")
		}
	}
	for j, e := range envFrom {
		switch {
		case e.SecretRef != nil && e.SecretRef.Name != "":
			return p.Child("envFrom").Index(j).Child("secretRef"), refuses("secrets")
		case e.ConfigMapRef != nil && e.ConfigMapRef.Name != "":
			return p.Child("envFrom").Index(j).Child("configMapRef"), refuses("config maps")
		}
	}
	return nil, ""
}

// volumeReference classifies a volume source. Every source of
// corev1.VolumeSource is listed, so that a new one (after an upgrade of
// k8s.io/api) falls to the default and is refused until someone decides.
func volumeReference(v *corev1.VolumeSource, p *field.Path) (*field.Path, string) {
	// secretRef reports the secret a network volume logs in with, if any.
	secretRef := func(ref *corev1.LocalObjectReference, source string) (*field.Path, string) {
		if ref != nil && ref.Name != "" {
			return p.Child(source, "secretRef"), refuses("secrets")
		}
		return nil, ""
	}
	switch {
	case *v == corev1.VolumeSource{}:
		// The apiserver defaults a volume without a source to emptyDir.
		return nil, ""
	case v.EmptyDir != nil, v.HostPath != nil, v.DownwardAPI != nil, v.Image != nil,
		v.AWSElasticBlockStore != nil, v.AzureDisk != nil, v.FC != nil, v.Flocker != nil,
		v.GCEPersistentDisk != nil, v.GitRepo != nil, v.NFS != nil, v.PhotonPersistentDisk != nil,
		v.PortworxVolume != nil, v.Quobyte != nil, v.VsphereVolume != nil:
		return nil, ""
	case v.CephFS != nil:
		return secretRef(v.CephFS.SecretRef, "cephfs")
	case v.Cinder != nil:
		return secretRef(v.Cinder.SecretRef, "cinder")
	case v.FlexVolume != nil:
		return secretRef(v.FlexVolume.SecretRef, "flexVolume")
	case v.ISCSI != nil:
		return secretRef(v.ISCSI.SecretRef, "iscsi")
	case v.RBD != nil:
		return secretRef(v.RBD.SecretRef, "rbd")
	case v.ScaleIO != nil:
		return secretRef(v.ScaleIO.SecretRef, "scaleIO")
	case v.StorageOS != nil:
		return secretRef(v.StorageOS.SecretRef, "storageos")
	case v.AzureFile != nil:
		// Always refused: the share is mounted with a secret's key.
		if v.AzureFile.SecretName != "" {
			return p.Child("azureFile", "secretName"), refuses("secrets")
		}
		return p.Child("azureFile"), refuses("secrets")
	case v.Secret != nil:
		return p.Child("secret"), refuses("secrets")
	case v.ConfigMap != nil:
		return p.Child("configMap"), refuses("config maps")
	case v.CSI != nil:
		if ref := v.CSI.NodePublishSecretRef; ref != nil && ref.Name != "" {
			return p.Child("csi", "nodePublishSecretRef"), refuses("secrets")
		}
		return p.Child("csi"), refuses("CSI drivers")
	case v.Glusterfs != nil:
		return p.Child("glusterfs"), refuses("endpoints (glusterfs volumes name them)")
	case v.PersistentVolumeClaim != nil:
		return p.Child("persistentVolumeClaim"), refuses("persistent volume claims")
	case v.Ephemeral != nil:
		return p.Child("ephemeral"), refuses("persistent volume claims (an ephemeral volume is one)")
	case v.Projected != nil:
		return projectionReference(v.Projected.Sources, p.Child("projected", "sources"))
	default:
		return p, "a mirror pod may not use a volume type NodeRestriction does not know (it refuses them)"
	}
}

// projectionReference allows only the downward API in a projected volume.
func projectionReference(sources []corev1.VolumeProjection, p *field.Path) (*field.Path, string) {
	for i, s := range sources {
		sp := p.Index(i)
		switch {
		case s.DownwardAPI != nil:
			continue
		case s.Secret != nil:
			return sp.Child("secret"), refuses("secrets")
		case s.ConfigMap != nil:
			return sp.Child("configMap"), refuses("config maps")
		case s.ServiceAccountToken != nil:
			return sp.Child("serviceAccountToken"), refuses("service accounts")
		case s.ClusterTrustBundle != nil:
			return sp.Child("clusterTrustBundle"), refuses("cluster trust bundles")
		case s.PodCertificate != nil:
			return sp.Child("podCertificate"), refuses("pod certificates")
		default:
			return sp, "a mirror pod may not use a projected source NodeRestriction does not know (it refuses them)"
		}
	}
	return nil, ""
}
