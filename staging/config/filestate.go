package config

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// fileEntry is what the file source knows of one manifest file.
type fileEntry struct {
	sum  [sha256.Size]byte
	read bool // sum holds the content last read
	// parsed are the pods of the content last read, if it was valid.
	parsed []*corev1.Pod
	// invalid is why the content last read was refused (reading, decoding,
	// validation); nil if it was valid.
	invalid error
	// pods were accepted last; they keep running while the file is broken
	// or refused.
	pods []*corev1.Pod
	// err is why the file's current content is refused (invalid, or a
	// full name another file holds); nil if accepted.
	err error
	// changedAt is when the content last changed after its first read.
	changedAt time.Time
}

// fileState is the file source's view of its directory. Only the source's
// Run goroutine touches it.
type fileState struct {
	entries map[string]*fileEntry
	owners  map[string]string // full name -> path of the file that holds it
	// hints name the files that held full names before the agent
	// restarted; a file that still defines such a name keeps it.
	hints map[string]string
	// dropped: a file with accepted pods was dropped since the last resolve.
	dropped bool
}

func newFileState(hints map[string]string) *fileState {
	return &fileState{entries: make(map[string]*fileEntry), owners: make(map[string]string), hints: maps.Clone(hints)}
}

func (st *fileState) entry(path string) *fileEntry {
	e := st.entries[path]
	if e == nil {
		e = &fileEntry{}
		st.entries[path] = e
	}
	return e
}

// paths returns the known files in lexical order.
func (st *fileState) paths() []string {
	return slices.Sorted(maps.Keys(st.entries))
}

// drop forgets path and reports whether it had accepted pods.
func (st *fileState) drop(path string) (hadPods bool) {
	e, ok := st.entries[path]
	if !ok {
		return false
	}
	delete(st.entries, path)
	st.dropped = st.dropped || len(e.pods) > 0
	return len(e.pods) > 0
}

// resolve decides which file's pods hold each full name, and so which
// pods are accepted, by one rule whatever order the files were read in:
//
//   - a file that holds a full name keeps it as long as it defines it
//     (also while its new content is refused: its accepted pods keep
//     running), so a running pod is never displaced by a newcomer; at
//     start, the hints say who held what before the restart;
//   - a name nobody holds goes to the file whose path sorts first;
//   - a file with a name held by another is refused whole, naming that
//     file, and keeps the pods it had.
//
// It sets each entry's pods and err and reports whether any file's
// accepted pods changed. A name released on the way (a holder whose new
// content no longer defines it) goes to its next claimant at once.
func (st *fileState) resolve() (changed bool) {
	changed, st.dropped = st.dropped, false
	for range len(st.entries) + 1 {
		if !st.resolveOnce() {
			break
		}
		changed = true
	}
	st.hints = nil // from now on, the owners say who holds what
	return changed
}

func (st *fileState) resolveOnce() (changed bool) {
	held := func(name string) string {
		if p, ok := st.owners[name]; ok {
			return p
		}
		return st.hints[name]
	}
	// Names reserved for the file holding them, if it still claims them.
	reserved := map[string]string{}
	for path, e := range st.entries {
		for _, pods := range [][]*corev1.Pod{e.parsed, e.pods} {
			for _, p := range pods {
				if full := podtypes.PodFullName(p); held(full) == path {
					reserved[full] = path
				}
			}
		}
	}
	taken := map[string]string{}
	free := func(path string, pods []*corev1.Pod) (holder, name string) {
		for _, p := range pods {
			full := podtypes.PodFullName(p)
			if h, ok := taken[full]; ok && h != path {
				return h, full
			}
			if h, ok := reserved[full]; ok && h != path {
				return h, full
			}
		}
		return "", ""
	}
	take := func(path string, pods []*corev1.Pod) {
		for _, p := range pods {
			taken[podtypes.PodFullName(p)] = path
		}
	}
	for _, path := range st.paths() {
		e := st.entries[path]
		accepted, err := e.pods, e.invalid
		if err == nil {
			if holder, name := free(path, e.parsed); holder != "" {
				err = &manifest.ManifestError{Origin: path, Reason: manifest.ReasonDuplicate,
					Detail: fmt.Sprintf("pod full name %s is already defined by %s", name, holder)}
			} else {
				accepted = e.parsed
			}
		}
		if holder, _ := free(path, accepted); holder != "" {
			accepted = nil // only when several files define several names each
		}
		take(path, accepted)
		if !samePods(e.pods, accepted) {
			changed = true
		}
		e.pods, e.err = accepted, err
	}
	st.owners = taken
	return changed
}

func samePods(a, b []*corev1.Pod) bool {
	return slices.EqualFunc(a, b, func(x, y *corev1.Pod) bool { return x == y })
}

// pods lists every accepted pod, by file.
func (st *fileState) pods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, path := range st.paths() {
		out = append(out, st.entries[path].pods...)
	}
	return out
}
