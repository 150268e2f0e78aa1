package config

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateNoAPIReferences refuses what a static pod cannot use: objects
// that only the apiserver holds (secrets, config maps, service accounts,
// claims). A static pod must run without the apiserver, and NodeRestriction
// would refuse its mirror pod anyway.
func validateNoAPIReferences(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(fp *field.Path, what string) {
		errs = append(errs, field.Forbidden(fp, "static pods may not reference "+what))
	}
	if spec.ServiceAccountName != "" {
		forbid(p.Child("serviceAccountName"), "service accounts")
	}
	if len(spec.ImagePullSecrets) > 0 {
		forbid(p.Child("imagePullSecrets"), "secrets")
	}
	if len(spec.ResourceClaims) > 0 {
		forbid(p.Child("resourceClaims"), "resource claims")
	}
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, c := range list.containers {
			cp := p.Child(list.name).Index(i)
			for j, e := range c.Env {
				if vf := e.ValueFrom; vf != nil {
					if vf.SecretKeyRef != nil {
						forbid(cp.Child("env").Index(j).Child("valueFrom", "secretKeyRef"), "secrets")
					}
					if vf.ConfigMapKeyRef != nil {
						forbid(cp.Child("env").Index(j).Child("valueFrom", "configMapKeyRef"), "config maps")
					}
				}
			}
			for j, e := range c.EnvFrom {
				if e.SecretRef != nil {
					forbid(cp.Child("envFrom").Index(j).Child("secretRef"), "secrets")
				}
				if e.ConfigMapRef != nil {
					forbid(cp.Child("envFrom").Index(j).Child("configMapRef"), "config maps")
				}
			}
		}
	}
	for i, v := range spec.Volumes {
		vp := p.Child("volumes").Index(i)
		switch {
		case v.Secret != nil:
			forbid(vp.Child("secret"), "secrets")
		case v.ConfigMap != nil:
			forbid(vp.Child("configMap"), "config maps")
		case v.PersistentVolumeClaim != nil:
			forbid(vp.Child("persistentVolumeClaim"), "persistent volume claims")
		case v.Ephemeral != nil:
			forbid(vp.Child("ephemeral"), "persistent volume claims")
		case v.CSI != nil:
			forbid(vp.Child("csi"), "CSI drivers")
		case v.AzureFile != nil:
			forbid(vp.Child("azureFile"), "secrets")
		case v.Glusterfs != nil:
			forbid(vp.Child("glusterfs"), "endpoints")
		case v.Projected != nil:
			for j, s := range v.Projected.Sources {
				sp := vp.Child("projected", "sources").Index(j)
				switch {
				case s.DownwardAPI != nil:
				case s.Secret != nil:
					forbid(sp.Child("secret"), "secrets")
				case s.ConfigMap != nil:
					forbid(sp.Child("configMap"), "config maps")
				case s.ServiceAccountToken != nil:
					forbid(sp.Child("serviceAccountToken"), "service accounts")
				default:
					forbid(sp, "anything but the downward API in a projected volume")
				}
			}
		}
	}
	return errs
}
