package config

import (
	"reflect"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// diff is what one merged update changed.
type diff struct {
	adds, updates, deletes, removes, reconciles []*corev1.Pod
	// readmitted are refused pods of other sources that were admitted
	// because this update freed their full name.
	readmitted map[podtypes.Source][]*corev1.Pod
	// freed counts full names this update released.
	freed    int
	firstSet bool
}

// apply merges u into the state; m.mu is held.
func (m *Merger) apply(u podtypes.PodUpdate) *diff {
	d := &diff{}
	src := u.Source
	current := m.pods[src]
	if current == nil {
		current = make(map[types.UID]*corev1.Pod)
	}
	switch u.Op {
	case podtypes.REMOVE:
		for _, ref := range u.Pods {
			if ref == nil {
				continue
			}
			delete(m.refused[src], ref.UID)
			if existing, ok := current[ref.UID]; ok {
				delete(current, ref.UID)
				m.release(existing, d)
				d.removes = append(d.removes, existing)
			}
		}
	case podtypes.SET:
		d.firstSet = !m.seen.Has(src)
		m.seen.Insert(src)
		delete(m.refused, src) // a SET restates everything the source has
		staying := sets.New[types.UID]()
		for _, ref := range u.Pods {
			if ref != nil {
				staying.Insert(ref.UID)
			}
		}
		next := make(map[types.UID]*corev1.Pod, len(u.Pods))
		for _, ref := range u.Pods {
			m.upsert(src, ref, current, next, staying, d)
		}
		for _, existing := range sortedPods(current) {
			if _, ok := next[existing.UID]; !ok {
				m.release(existing, d)
				d.removes = append(d.removes, existing)
			}
		}
		current = next
	default: // ADD, UPDATE, DELETE, RECONCILE: compare to find out
		for _, ref := range u.Pods {
			m.upsert(src, ref, current, current, nil, d)
		}
	}
	m.pods[src] = current
	if d.freed > 0 {
		m.readmit(src, d)
	}
	return d
}

// upsert merges one pod of src: found in old, it is compared; otherwise it
// is added unless another pod holds its full name. A holder of the same
// source that is not in staying (it leaves with this SET) holds nothing.
func (m *Merger) upsert(src podtypes.Source, ref *corev1.Pod, old, next map[types.UID]*corev1.Pod, staying sets.Set[types.UID], d *diff) {
	if ref == nil {
		return
	}
	if ref.UID == "" {
		m.refuse(src, ref, manifest.ReasonInvalid, "it has no UID")
		return
	}
	if ref.Annotations == nil {
		ref.Annotations = make(map[string]string)
	}
	ref.Annotations[podtypes.ConfigSourceAnnotationKey] = string(src)

	if _, again := next[ref.UID]; again && staying != nil {
		m.log.Info("Ignoring a second pod with the same UID in one SET", "source", src, "pod", podtypes.PodFullName(ref), "uid", ref.UID)
		return
	}
	if existing, found := old[ref.UID]; found {
		next[ref.UID] = existing
		m.compare(existing, ref, next, d)
		return
	}
	if !podtypes.IsMirrorPod(ref) {
		full := podtypes.PodFullName(ref)
		if h, held := m.names[full]; held && h.uid != ref.UID && (h.source != src || staying == nil || staying.Has(h.uid)) {
			m.refuse(src, ref, manifest.ReasonDuplicate, "its full name is already used by pod "+string(h.uid)+" from source "+string(h.source))
			return
		}
		m.names[full] = holder{source: src, uid: ref.UID}
	}
	m.stampSeen(ref)
	next[ref.UID] = ref
	d.adds = append(d.adds, ref)
}

// compare decides what a new version of a known pod is: nothing, a status
// change (RECONCILE), a graceful deletion (DELETE) or a change (UPDATE).
func (m *Merger) compare(existing, ref *corev1.Pod, next map[types.UID]*corev1.Pod, d *diff) {
	if sameVersion(existing, ref) {
		return
	}
	if !podsDiffer(existing, ref) {
		if !equal(&existing.Status, &ref.Status) {
			// The version goes with the status: a receiver that compares
			// what it wrote with what it sees needs both.
			existing.Status = ref.Status
			existing.ResourceVersion = ref.ResourceVersion
			d.reconciles = append(d.reconciles, existing)
		}
		return
	}
	// The first sighting stays the first sighting.
	if seen, ok := existing.Annotations[podtypes.ConfigFirstSeenAnnotationKey]; ok {
		ref.Annotations[podtypes.ConfigFirstSeenAnnotationKey] = seen
	} else {
		m.stampSeen(ref)
	}
	next[ref.UID] = ref
	if ref.DeletionTimestamp != nil {
		d.deletes = append(d.deletes, ref)
	} else {
		d.updates = append(d.updates, ref)
	}
}

// sameVersion spots, without comparing them, two copies of one version of
// a pod (of the same UID): the apiserver's resourceVersion names one
// version of an object, and a static pod's UID is the hash of its content
// (its config hash). Sources re-send every pod on every change, so this is
// the common case.
func sameVersion(a, b *corev1.Pod) bool {
	if a.ResourceVersion != "" && a.ResourceVersion == b.ResourceVersion {
		return true
	}
	h := a.Annotations[podtypes.ConfigHashAnnotationKey]
	return h != "" && h == string(a.UID) && h == b.Annotations[podtypes.ConfigHashAnnotationKey]
}

// podsDiffer reports whether two versions of a pod differ in what the
// agent acts on: spec, labels, deletion request, or annotations other than
// the config-seen stamp.
func podsDiffer(a, b *corev1.Pod) bool {
	return !equal(&a.Spec, &b.Spec) ||
		!equal(a.Labels, b.Labels) ||
		!equal(a.DeletionTimestamp, b.DeletionTimestamp) ||
		!equal(a.DeletionGracePeriodSeconds, b.DeletionGracePeriodSeconds) ||
		!annotationsEqual(a.Annotations, b.Annotations)
}

// equal is semantic equality (quantities compare by value, times by
// instant) with reflect.DeepEqual as the fast path: identical values are
// the common case, and the semantic comparison is many times slower.
func equal(a, b any) bool {
	return reflect.DeepEqual(a, b) || equality.Semantic.DeepEqual(a, b)
}

func annotationsEqual(a, b map[string]string) bool {
	n := 0
	for k, v := range a {
		if k == podtypes.ConfigFirstSeenAnnotationKey {
			continue
		}
		if w, ok := b[k]; !ok || w != v {
			return false
		}
		n++
	}
	for k := range b {
		if k != podtypes.ConfigFirstSeenAnnotationKey {
			n--
		}
	}
	return n == 0
}

func (m *Merger) stampSeen(pod *corev1.Pod) {
	if _, ok := pod.Annotations[podtypes.ConfigFirstSeenAnnotationKey]; !ok {
		pod.Annotations[podtypes.ConfigFirstSeenAnnotationKey] = m.clock.Now().UTC().Format(time.RFC3339Nano)
	}
}

// release frees the full name a leaving pod holds.
func (m *Merger) release(pod *corev1.Pod, d *diff) {
	full := podtypes.PodFullName(pod)
	if h, ok := m.names[full]; ok && h.uid == pod.UID {
		delete(m.names, full)
		d.freed++
	}
}

func sortedPods(pods map[types.UID]*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		out = append(out, p)
	}
	slices.SortFunc(out, comparePods)
	return out
}
