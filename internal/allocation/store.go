package allocation

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// maxFileSize bounds the file read at start: some hundred bytes per pod.
const maxFileSize = 16 << 20

// Pending says why a pod's resize waits: Reason Deferred (it may fit
// later) or Infeasible (it never fits this node), as the kubelet's
// PodResizePending condition says it; the zero value: none waits.
type Pending struct {
	Reason, Message string
}

// podRecord is one pod in the file.
type podRecord struct {
	// Allocated are the containers' cpu and memory, by container name.
	Allocated map[string]corev1.ResourceRequirements `json:"allocated"`
	// Resized are what in-place resizes gave the running containers, by
	// container name: one record per container, the newest container's,
	// so that restarts do not add records. (An older agent's "resized",
	// by container ID, is not read: a resize is remade from the spec.)
	Resized map[string]resizedContainer `json:"resizedContainers,omitempty"`
}

// resizedContainer is what a resize gave one container, by its ID.
type resizedContainer struct {
	ID        string                      `json:"id"`
	Resources corev1.ResourceRequirements `json:"resources"`
}

// Store holds the allocations. Its zero value is not usable: see Open. A
// nil *Store remembers nothing: every pod runs as its spec asks.
type Store struct {
	path string

	mu      sync.Mutex
	pods    map[types.UID]*podRecord
	pending map[types.UID]Pending
}

// Open reads the store's file, if there is one; path "" keeps it in
// memory only.
func Open(path string) (*Store, error) {
	s := &Store{path: path, pods: map[types.UID]*podRecord{}, pending: map[types.UID]Pending{}}
	if path == "" {
		return s, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("allocation file %s: %w", path, err)
	}
	f, err := os.Open(path) // #nosec G304 -- the agent's own file under its root directory
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("allocation file %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	raw, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("allocation file %s: %w", path, err)
	case len(raw) > maxFileSize:
		return nil, fmt.Errorf("allocation file %s: larger than %d bytes", path, maxFileSize)
	}
	if err := json.Unmarshal(raw, &s.pods); err != nil {
		return nil, fmt.Errorf("allocation file %s: %w", path, err)
	}
	return s, nil
}

// Known reports whether the pod has an allocation.
func (s *Store) Known(uid types.UID) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pods[uid]
	return ok
}

// Allocate records the pod's containers' cpu and memory as allocated.
func (s *Store) Allocate(pod *corev1.Pod) error {
	if s == nil {
		return nil
	}
	alloc := map[string]corev1.ResourceRequirements{}
	if r := pod.Spec.Resources; r != nil {
		alloc[podLevel] = CPUMemory(*r)
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			alloc[cs[i].Name] = CPUMemory(cs[i].Resources)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.pods[pod.UID]
	if rec == nil {
		rec = &podRecord{}
		s.pods[pod.UID] = rec
	}
	rec.Allocated = alloc
	return s.saveLocked()
}

// podLevel keys the pod-level resources in a pod's allocation (no
// container has an empty name).
const podLevel = ""

// podLevelName is how Changed names the pod-level resources.
const podLevelName = "pod-level resources"

// Changed names the app containers whose spec asks other cpu or memory
// than they were allocated, and the others that do: init containers, and
// podLevelName for the pod's own resources. None for a pod with no allocation.
func (s *Store) Changed(pod *corev1.Pod) (app, other []string) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.pods[pod.UID]
	if rec == nil {
		return nil, nil
	}
	changed := func(cs []corev1.Container) []string {
		var out []string
		for i := range cs {
			if a, ok := rec.Allocated[cs[i].Name]; !ok || !same(a, CPUMemory(cs[i].Resources)) {
				out = append(out, cs[i].Name)
			}
		}
		return out
	}
	other = changed(pod.Spec.InitContainers)
	var want corev1.ResourceRequirements
	if pod.Spec.Resources != nil {
		want = CPUMemory(*pod.Spec.Resources)
	}
	if !same(rec.Allocated[podLevel], want) {
		other = append(other, podLevelName)
	}
	return changed(pod.Spec.Containers), other
}

// Apply returns the pod as it is to run: a copy with its containers'
// allocated cpu and memory when its spec asks otherwise, else pod itself.
func (s *Store) Apply(pod *corev1.Pod) *corev1.Pod {
	if app, init := s.Changed(pod); len(app) == 0 && len(init) == 0 {
		return pod
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.pods[pod.UID]
	if rec == nil {
		return pod // removed meanwhile
	}
	out := pod.DeepCopy()
	if a, ok := rec.Allocated[podLevel]; ok && out.Spec.Resources != nil {
		*out.Spec.Resources = Overlay(*out.Spec.Resources, a)
	}
	for _, cs := range [][]corev1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			if a, ok := rec.Allocated[c.Name]; ok {
				c.Resources = Overlay(c.Resources, a)
			}
		}
	}
	return out
}

// SetPending records why the pod's resize waits; the zero Pending clears it.
func (s *Store) SetPending(uid types.UID, p Pending) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p == (Pending{}) {
		delete(s.pending, uid)
		return
	}
	s.pending[uid] = p
}

// Pending says why the pod's resize waits; the zero value if none does.
func (s *Store) Pending(uid types.UID) Pending {
	if s == nil {
		return Pending{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending[uid]
}

// Resized returns what an in-place resize gave the container named name
// whose ID is containerID: nothing for another container of that name
// (an earlier one, or a new one made with the spec's resources).
func (s *Store) Resized(uid types.UID, name, containerID string) (corev1.ResourceRequirements, bool) {
	if s == nil {
		return corev1.ResourceRequirements{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec := s.pods[uid]; rec != nil {
		if r, ok := rec.Resized[name]; ok && r.ID == containerID {
			return r.Resources, true
		}
	}
	return corev1.ResourceRequirements{}, false
}

// SetResized records what an in-place resize gave the container named
// name whose ID is containerID, in place of what an earlier container of
// that name was given.
func (s *Store) SetResized(uid types.UID, name, containerID string, r corev1.ResourceRequirements) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.pods[uid]
	if rec == nil {
		rec = &podRecord{}
		s.pods[uid] = rec
	}
	if rec.Resized == nil {
		rec.Resized = map[string]resizedContainer{}
	}
	rec.Resized[name] = resizedContainer{ID: containerID, Resources: CPUMemory(r)}
	return s.saveLocked()
}

// Remove forgets the pod.
func (s *Store) Remove(uid types.UID) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, uid)
	if _, ok := s.pods[uid]; !ok {
		return nil
	}
	delete(s.pods, uid)
	return s.saveLocked()
}

// Prune forgets the pods keep does not keep: those gone while the agent
// was down, or whose worker never ran to its end, would otherwise stay in
// the file for good, and a file grown past its bound stops the agent.
func (s *Store) Prune(keep func(types.UID) bool) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid := range s.pending {
		if !keep(uid) {
			delete(s.pending, uid)
		}
	}
	pruned := false
	for uid := range s.pods {
		if !keep(uid) {
			delete(s.pods, uid)
			pruned = true
		}
	}
	if !pruned {
		return nil
	}
	return s.saveLocked()
}

// saveLocked writes the file whole: a new file renamed over the old, so
// that a crash leaves one or the other. The caller holds s.mu.
func (s *Store) saveLocked() error {
	if s.path == "" {
		return nil
	}
	raw, err := json.Marshal(s.pods)
	if err != nil {
		return fmt.Errorf("allocation file %s: %w", s.path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+".*")
	if err != nil {
		return fmt.Errorf("allocation file %s: %w", s.path, err)
	}
	_, err = tmp.Write(raw)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("allocation file %s: %w", s.path, err)
	}
	return nil
}
