package config

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ErrBadUpdate is returned by Merge for an update with an unknown source
// or operation.
var ErrBadUpdate = errors.New("bad pod update")

// Mode chooses how the merger reports changes to its receiver.
type Mode int

const (
	// Incremental sends, per merged update, one update for each kind of
	// change, in this order: REMOVE, ADD, UPDATE, DELETE, RECONCILE, each
	// for the source that changed. A source's first SET that changes
	// nothing still sends an empty ADD, so the receiver learns that the
	// source is ready.
	Incremental Mode = iota
	// Snapshot sends a SET of every pod of every source (Source is
	// AllSource) when pods were added, updated, deleted or removed, or a
	// source sent its first SET. Status-only changes send nothing.
	Snapshot
	// SnapshotAndUpdates sends a SET of every pod when pods were added or
	// removed or a source sent its first SET, then UPDATE and DELETE for
	// changed pods. Status-only changes send nothing.
	SnapshotAndUpdates
)

func (m Mode) String() string {
	switch m {
	case Incremental:
		return "Incremental"
	case Snapshot:
		return "Snapshot"
	case SnapshotAndUpdates:
		return "SnapshotAndUpdates"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// MergerOptions configure a Merger. The zero value is usable.
type MergerOptions struct {
	Mode Mode
	// Buffer is the capacity of the Updates channel; default 50.
	Buffer int
	// Recorder receives an event for each refused pod: about the Node
	// named NodeName for a static pod (it has no API object of its own;
	// `kubectl describe node` shows it), about the pod for others.
	Recorder EventRecorder
	NodeName string
	Logger   logr.Logger
	// Clock stamps the config-seen annotation of pods that lack it.
	Clock   clock.PassiveClock
	Metrics *Metrics
}

// Merger merges the updates of several sources into one stream. Each
// source's pods are kept apart; a pod's full name may be used by one
// (non-mirror) pod across all sources. It starts no goroutine and is safe
// for concurrent use.
type Merger struct {
	mode    Mode
	log     logr.Logger
	clock   clock.PassiveClock
	rec     EventRecorder
	nodeRef *corev1.ObjectReference // nil without a NodeName
	metrics *Metrics
	updates chan podtypes.PodUpdate

	// sendMu orders whole merges, delivery included; mu guards the state
	// and is never held while sending, so that queries from the receiver
	// cannot deadlock against a blocked send.
	sendMu sync.Mutex
	mu     sync.RWMutex
	pods   map[podtypes.Source]map[types.UID]*corev1.Pod
	seen   sets.Set[podtypes.Source]
	// names maps the full name of every non-mirror pod to its holder.
	names   map[string]holder
	refused map[podtypes.Source]map[types.UID]*refusal
}

type holder struct {
	source podtypes.Source
	uid    types.UID
}

// NewMerger returns a Merger with no pods and no source seen.
func NewMerger(opts MergerOptions) *Merger {
	if opts.Buffer <= 0 {
		opts.Buffer = 50
	}
	if opts.Recorder == nil {
		opts.Recorder = nopRecorder{}
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Merger{
		mode:    opts.Mode,
		log:     opts.Logger.WithName("merger"),
		clock:   opts.Clock,
		rec:     opts.Recorder,
		nodeRef: nodeRefOf(opts.NodeName),
		metrics: opts.Metrics,
		updates: make(chan podtypes.PodUpdate, opts.Buffer),
		pods:    make(map[podtypes.Source]map[types.UID]*corev1.Pod),
		seen:    sets.New[podtypes.Source](),
		names:   make(map[string]holder),
		refused: make(map[podtypes.Source]map[types.UID]*refusal),
	}
}

// Updates is the merged stream. It is never closed; receive until your
// context ends. The pods in each update are the receiver's own copies.
func (m *Merger) Updates() <-chan podtypes.PodUpdate { return m.updates }

// Merge applies one source update and delivers the resulting
// notifications. It implements Sink. ADD, UPDATE, DELETE and RECONCILE
// all upsert the given pods (what changed is found by comparison); REMOVE
// forgets them; SET replaces the source's pods and marks the source seen.
// Two pods of one UID with the same non-empty resourceVersion, or with a
// config hash equal to that UID (static pods: their UID hashes their
// content), are taken to be the same version without comparing them.
func (m *Merger) Merge(ctx context.Context, u podtypes.PodUpdate) error {
	if !u.Source.Valid() {
		return fmt.Errorf("merge: source %q: %w", u.Source, ErrBadUpdate)
	}
	if u.Op < podtypes.SET || u.Op > podtypes.RECONCILE {
		return fmt.Errorf("merge: %v from %s: %w", u.Op, u.Source, ErrBadUpdate)
	}
	m.sendMu.Lock()
	defer m.sendMu.Unlock()

	m.mu.Lock()
	d := m.apply(u)
	out := m.notifications(u.Source, d)
	m.mu.Unlock()

	for _, n := range out {
		select {
		case m.updates <- n:
			m.metrics.countUpdate(n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// SeenAllSources reports whether every given source has sent its first
// SET. AllSource stands for all concrete sources.
func (m *Merger) SeenAllSources(sources ...podtypes.Source) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, s := range sources {
		if s == podtypes.AllSource {
			if !m.seen.HasAll(podtypes.Sources()...) {
				return false
			}
			continue
		}
		if !m.seen.Has(s) {
			return false
		}
	}
	return true
}

// Pods returns a copy of every merged pod, ordered by source and full name.
func (m *Merger) Pods() []*corev1.Pod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return copyPods(m.mergedState())
}

// mergedState lists every pod in a stable order; mu must be held.
func (m *Merger) mergedState() []*corev1.Pod {
	var all []*corev1.Pod
	for _, s := range podtypes.Sources() {
		start := len(all)
		for _, p := range m.pods[s] {
			all = append(all, p)
		}
		slices.SortFunc(all[start:], comparePods)
	}
	return all
}

func comparePods(a, b *corev1.Pod) int {
	if c := cmp.Compare(podtypes.PodFullName(a), podtypes.PodFullName(b)); c != 0 {
		return c
	}
	return cmp.Compare(a.UID, b.UID)
}
