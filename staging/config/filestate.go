package config

import (
	"crypto/sha256"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// fileEntry is what the file source knows of one manifest file.
type fileEntry struct {
	sum  [sha256.Size]byte
	read bool // sum holds the content last read
	// pods were accepted last; they keep running while the file is broken.
	pods []*corev1.Pod
	// err is why the file's current content is refused; nil if accepted.
	err error
	// held are valid pods refused because another file holds their full
	// name; they are accepted when it is freed.
	held []*corev1.Pod
}

// fileState is the file source's view of its directory. Only the source's
// Run goroutine touches it.
type fileState struct {
	entries map[string]*fileEntry
	owners  map[string]string // full name -> path of the file that holds it
}

func newFileState() *fileState {
	return &fileState{entries: make(map[string]*fileEntry), owners: make(map[string]string)}
}

func (st *fileState) entry(path string) *fileEntry {
	e := st.entries[path]
	if e == nil {
		e = &fileEntry{}
		st.entries[path] = e
	}
	return e
}

// paths returns the known files in lexical order, the order in which
// conflicting files are resolved.
func (st *fileState) paths() []string {
	return slices.Sorted(maps.Keys(st.entries))
}

// conflict returns the file, other than path, that holds one of pods' full
// names, and that name.
func (st *fileState) conflict(path string, pods []*corev1.Pod) (holder, fullName string) {
	for _, p := range pods {
		full := podtypes.PodFullName(p)
		if h, ok := st.owners[full]; ok && h != path {
			return h, full
		}
	}
	return "", ""
}

// accept makes pods the accepted pods of path and reports whether any full
// name was freed on the way.
func (st *fileState) accept(path string, pods []*corev1.Pod) (freed bool) {
	e := st.entry(path)
	freed = st.releaseNames(path, e)
	for _, p := range pods {
		st.owners[podtypes.PodFullName(p)] = path
	}
	e.pods, e.err, e.held = pods, nil, nil
	return freed
}

// drop forgets path and reports whether it had accepted pods.
func (st *fileState) drop(path string) (hadPods bool) {
	e, ok := st.entries[path]
	if !ok {
		return false
	}
	st.releaseNames(path, e)
	delete(st.entries, path)
	return len(e.pods) > 0
}

func (st *fileState) releaseNames(path string, e *fileEntry) (freed bool) {
	for _, p := range e.pods {
		full := podtypes.PodFullName(p)
		if st.owners[full] == path {
			delete(st.owners, full)
			freed = true
		}
	}
	return freed
}

// pods lists every accepted pod, by file.
func (st *fileState) pods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, path := range st.paths() {
		out = append(out, st.entries[path].pods...)
	}
	return out
}
