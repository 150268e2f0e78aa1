package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ParseOptions say where a manifest comes from. All but Now are part of the
// identity of its pods.
type ParseOptions struct {
	// NodeName is this node's name; it suffixes pod names and binds pods.
	NodeName string
	// Source is podtypes.FileSource or podtypes.HTTPSource.
	Source podtypes.Source
	// Origin is the manifest's file path or URL (without credentials: it
	// is recorded in the pods' origin annotation).
	Origin string
	// Now, if set, is recorded in the config-seen annotation.
	Now time.Time
}

// ParseManifest decodes a manifest strictly, applies the static pod
// defaults and validates the result, as the file and HTTP sources do. The
// returned pods are ready to run: named <name>-<node>, bound to the node,
// with a UID that hashes the defaulted manifest, the node and the origin.
// Every error is a *ManifestError naming the origin, the fields and why.
func ParseManifest(data []byte, opts ParseOptions) ([]*corev1.Pod, error) {
	pods, err := DecodeManifest(data)
	if err != nil {
		return nil, withOrigin(err, opts.Origin)
	}
	var tooLong field.ErrorList
	for i, pod := range pods {
		var root *field.Path
		if len(pods) > 1 {
			root = field.NewPath("items").Index(i)
		}
		tooLong = append(tooLong, checkListLengths(&pod.Spec, root.Child("spec"))...)
	}
	if len(tooLong) > 0 {
		return nil, (&ManifestError{Origin: opts.Origin, Reason: ReasonTooLarge, Fields: tooLong}).capFields()
	}
	var errs field.ErrorList
	byName := make(map[string]int, len(pods))
	for i, pod := range pods {
		var root *field.Path
		if len(pods) > 1 {
			root = field.NewPath("items").Index(i)
		}
		if pod.Name == "" {
			errs = append(errs, field.Required(root.Child("metadata", "name"), "a static pod needs a name"))
			continue
		}
		makeStatic(pod, opts)
		errs = append(errs, validateStaticPod(pod, root)...)
		full := podtypes.PodFullName(pod)
		if j, ok := byName[full]; ok {
			errs = append(errs, field.Invalid(root.Child("metadata", "name"), pod.Name,
				"the full name "+full+" is already used by items["+strconv.Itoa(j)+"]"))
		}
		byName[full] = i
	}
	if len(errs) > 0 {
		return nil, (&ManifestError{Origin: opts.Origin, Reason: ReasonInvalid, Fields: errs}).capFields()
	}
	return pods, nil
}

// makeStatic turns a decoded manifest into the static pod the node runs.
func makeStatic(pod *corev1.Pod, opts ParseOptions) {
	// What the apiserver owns carries no meaning in a manifest; dropping it
	// keeps an exported object and a hand-written one the same pod.
	pod.UID, pod.ResourceVersion, pod.Generation = "", "", 0
	pod.CreationTimestamp, pod.ManagedFields = metav1.Time{}, nil
	pod.Status = corev1.PodStatus{}
	for _, k := range []string{podtypes.ConfigSourceAnnotationKey, podtypes.ConfigHashAnnotationKey, podtypes.ConfigFirstSeenAnnotationKey, podtypes.ConfigOriginAnnotationKey} {
		delete(pod.Annotations, k)
	}
	if len(pod.Annotations) == 0 {
		pod.Annotations = nil
	}
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	setPodDefaults(pod)
	if opts.Source == podtypes.FileSource {
		// A node-local pod must survive node taints: it has nowhere else to go.
		addNoExecuteToleration(pod)
	}

	uid := staticPodUID(pod, opts)
	node := strings.ToLower(opts.NodeName)
	pod.UID = uid
	pod.Name = pod.Name + "-" + node
	pod.Spec.NodeName = node
	if pod.Annotations == nil {
		pod.Annotations = make(map[string]string, 3)
	}
	pod.Annotations[podtypes.ConfigSourceAnnotationKey] = string(opts.Source)
	pod.Annotations[podtypes.ConfigHashAnnotationKey] = string(uid)
	if opts.Origin != "" {
		pod.Annotations[podtypes.ConfigOriginAnnotationKey] = opts.Origin
	}
	if !opts.Now.IsZero() {
		pod.Annotations[podtypes.ConfigFirstSeenAnnotationKey] = opts.Now.UTC().Format(time.RFC3339Nano)
	}
	pod.Status.Phase = corev1.PodPending
}

// staticPodUID hashes the defaulted pod (before it is named for the node)
// with the node, the source and the origin. JSON encoding of a typed pod is
// deterministic (struct order, sorted map keys, canonical quantities), so
// equal pods hash equal however their manifests were spelled.
func staticPodUID(pod *corev1.Pod, opts ParseOptions) types.UID {
	h := sha256.New()
	_ = json.NewEncoder(h).Encode(pod) // a typed pod always encodes
	h.Write([]byte("\x00node=" + strings.ToLower(opts.NodeName)))
	h.Write([]byte("\x00source=" + string(opts.Source)))
	h.Write([]byte("\x00origin=" + opts.Origin))
	return types.UID(hex.EncodeToString(h.Sum(nil)[:16]))
}

func addNoExecuteToleration(pod *corev1.Pod) {
	want := corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	for _, t := range pod.Spec.Tolerations {
		if t.Key == "" && t.Operator == want.Operator && t.Effect == want.Effect && t.TolerationSeconds == nil {
			return
		}
	}
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, want)
}
