package manifest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateNoAPIReferences refuses what a static pod cannot use: objects
// that only the apiserver holds (secrets, config maps, claims). A static
// pod must run without the apiserver. Two things are allowed because the
// pod runs without them: a service account name (the pod gets no token),
// and env or envFrom references marked optional, which resolve as absent.
// Either makes the pod unmirrorable (NodeRestriction refuses the mirror),
// which the agent reports; the pod still runs.
func validateNoAPIReferences(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(fp *field.Path, what string) {
		errs = append(errs, field.Forbidden(fp, "static pods may not reference "+what))
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
				if e.ValueFrom != nil {
					errs = append(errs, validateEnvSource(e.ValueFrom, cp.Child("env").Index(j).Child("valueFrom"))...)
				}
			}
			for j, e := range c.EnvFrom {
				errs = append(errs, validateEnvFromSource(&e, cp.Child("envFrom").Index(j))...)
			}
			if len(c.Resources.Claims) > 0 {
				forbid(cp.Child("resources", "claims"), "resource claims")
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

// markOptional is the hint for a required reference a static pod cannot
// resolve.
const markOptional = "a static pod cannot read API objects; mark the reference optional: true if the pod can run without it"

// validateEnvSource allows one source per variable, and a secret or config
// map key only when optional (it resolves as unset).
func validateEnvSource(vf *corev1.EnvVarSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, set := range []bool{vf.FieldRef != nil, vf.ResourceFieldRef != nil, vf.SecretKeyRef != nil, vf.ConfigMapKeyRef != nil, vf.FileKeyRef != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		errs = append(errs, field.Invalid(p, "", "may not have more than one source"))
	}
	if r := vf.SecretKeyRef; r != nil {
		errs = append(errs, optionalKeyRef(r.Name, r.Key, r.Optional, "secrets", p.Child("secretKeyRef"))...)
	}
	if r := vf.ConfigMapKeyRef; r != nil {
		errs = append(errs, optionalKeyRef(r.Name, r.Key, r.Optional, "config maps", p.Child("configMapKeyRef"))...)
	}
	return errs
}

// validateEnvFromSource allows one source per entry, and a secret or config
// map only when optional (it contributes nothing).
func validateEnvFromSource(e *corev1.EnvFromSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if e.SecretRef != nil && e.ConfigMapRef != nil {
		errs = append(errs, field.Invalid(p, "", "may not have more than one source"))
	}
	if r := e.SecretRef; r != nil {
		errs = append(errs, optionalRef(r.Name, r.Optional, "secrets", p.Child("secretRef"))...)
	}
	if r := e.ConfigMapRef; r != nil {
		errs = append(errs, optionalRef(r.Name, r.Optional, "config maps", p.Child("configMapRef"))...)
	}
	return errs
}

func optionalKeyRef(name, key string, optional *bool, what string, p *field.Path) field.ErrorList {
	errs := optionalRef(name, optional, what, p)
	if key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	}
	return errs
}

func optionalRef(name string, optional *bool, what string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if optional == nil || !*optional {
		errs = append(errs, field.Forbidden(p, "static pods may not depend on "+what+": "+markOptional))
	}
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	return errs
}
