package volumes

import (
	"context"
	"errors"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/nodeagent/nodeagent/internal/downward"
)

// Sources reads what API pods' volumes hold: ConfigMaps, Secrets and
// service account tokens. A missing object is an error for which
// apierrors.IsNotFound is true; it stays wrapped in what Setup returns.
type Sources interface {
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	ServiceAccountToken(ctx context.Context, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) (string, error)
}

// The kubelet's default file mode for these volumes.
const defaultMode = 0o644

// payloadBuilder turns one volume's source into its files.
type payloadBuilder struct {
	ctx         context.Context
	pod         *corev1.Pod
	sources     Sources
	allocatable downward.Allocatable
	// fsGroup is set when the pod has one: a token file is then 0600 and
	// gets the group's read bit with the other files, as the kubelet does.
	fsGroup bool
}

func modeOf(m *int32, def os.FileMode) os.FileMode {
	if m == nil {
		return def
	}
	return os.FileMode(*m & 0o777) // #nosec G115 -- masked to 9 bits first
}

// add puts a file into out, refusing a path two sources both write.
func add(out payload, p string, f file) error {
	if _, dup := out[p]; dup {
		return fmt.Errorf("path %q is written by two sources", p)
	}
	out[p] = f
	return nil
}

// keyed resolves a configMap's or secret's keys: all of them without
// items, else the items' (a key missing is an error unless optional).
func keyed(kind, ns, name string, data map[string][]byte, items []corev1.KeyToPath, def os.FileMode, optional bool, out payload) error {
	if len(items) == 0 {
		for k, v := range data {
			if err := add(out, k, file{data: v, mode: def}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return fmt.Errorf("%s %s/%s has no key %q", kind, ns, name, it.Key)
		}
		if err := add(out, it.Path, file{data: v, mode: modeOf(it.Mode, def)}); err != nil {
			return err
		}
	}
	return nil
}

func (b *payloadBuilder) configMap(name string, items []corev1.KeyToPath, optional *bool, def os.FileMode, out payload) error {
	ns := b.pod.Namespace
	cm, err := b.sources.ConfigMap(b.ctx, ns, name)
	if err != nil {
		return objectError("configmap", ns, name, optional, err)
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyed("configmap", ns, name, data, items, def, isTrue(optional), out)
}

func (b *payloadBuilder) secret(name string, items []corev1.KeyToPath, optional *bool, def os.FileMode, out payload) error {
	ns := b.pod.Namespace
	s, err := b.sources.Secret(b.ctx, ns, name)
	if err != nil {
		return objectError("secret", ns, name, optional, err)
	}
	data := make(map[string][]byte, len(s.Data))
	for k, v := range s.Data {
		data[k] = v
	}
	return keyed("secret", ns, name, data, items, def, isTrue(optional), out)
}

// errOptionalMissing: an optional object does not exist; its source adds
// no file.
var errOptionalMissing = errors.New("optional object missing")

func objectError(kind, ns, name string, optional *bool, err error) error {
	if isTrue(optional) && apierrors.IsNotFound(err) {
		return errOptionalMissing
	}
	return &sourceError{fmt.Errorf("%s %s/%s: %w", kind, ns, name, err)}
}

// sourceError: what a volume holds could not be read (the object is
// missing, the apiserver away, a token refused); a volume already written
// keeps its content through it.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

func (b *payloadBuilder) downwardAPI(items []corev1.DownwardAPIVolumeFile, def os.FileMode, out payload) error {
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil && it.ResourceFieldRef == nil:
			v, err = downward.VolumeFieldValue(b.pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil && it.FieldRef == nil:
			if it.ResourceFieldRef.ContainerName == "" {
				err = fmt.Errorf("resourceFieldRef %s: a volume item must name its container", it.ResourceFieldRef.Resource)
				break
			}
			v, err = downward.ResourceValue(b.pod, "", it.ResourceFieldRef, b.allocatable)
		default:
			err = errors.New("needs exactly one of fieldRef and resourceFieldRef")
		}
		if err != nil {
			return fmt.Errorf("downwardAPI item %q: %w", it.Path, err)
		}
		if err := add(out, it.Path, file{data: []byte(v), mode: modeOf(it.Mode, def)}); err != nil {
			return err
		}
	}
	return nil
}

// projected gathers every source of a projected volume into one payload.
func (b *payloadBuilder) projected(p *corev1.ProjectedVolumeSource, out payload) error {
	def := modeOf(p.DefaultMode, defaultMode)
	for i, s := range p.Sources {
		var err error
		switch {
		case s.ConfigMap != nil:
			err = b.configMap(s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, def, out)
		case s.Secret != nil:
			err = b.secret(s.Secret.Name, s.Secret.Items, s.Secret.Optional, def, out)
		case s.DownwardAPI != nil:
			err = b.downwardAPI(s.DownwardAPI.Items, def, out)
		case s.ServiceAccountToken != nil:
			err = b.token(s.ServiceAccountToken, def, out)
		case s.ClusterTrustBundle != nil:
			err = fmt.Errorf("clusterTrustBundle sources are not provided by this agent: %w", ErrUnsupportedVolume)
		case s.PodCertificate != nil:
			err = fmt.Errorf("podCertificate sources are not provided by this agent: %w", ErrUnsupportedVolume)
		default:
			err = fmt.Errorf("names no source: %w", ErrUnsupportedVolume)
		}
		if errors.Is(err, errOptionalMissing) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sources[%d]: %w", i, err)
		}
	}
	return nil
}

func (b *payloadBuilder) token(p *corev1.ServiceAccountTokenProjection, def os.FileMode, out payload) error {
	tok, err := b.sources.ServiceAccountToken(b.ctx, b.pod, p)
	if err != nil {
		return &sourceError{fmt.Errorf("serviceAccountToken of %s/%s (audience %q): %w", b.pod.Namespace, b.pod.Spec.ServiceAccountName, p.Audience, err)}
	}
	mode := def
	if b.fsGroup {
		// Owner-only, and the fsGroup's read bit on top (0640), not the
		// world's whatever defaultMode says.
		mode = 0o600
	}
	return add(out, p.Path, file{data: []byte(tok), mode: mode})
}

func isTrue(b *bool) bool { return b != nil && *b }
