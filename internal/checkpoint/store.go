package checkpoint

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Phase is where a checkpointed pod is in its lifecycle.
type Phase string

const (
	// Running: the pod should run; on restart it is started or adopted.
	Running Phase = "running"
	// Terminating: the pod is being stopped; on restart its termination
	// resumes with the time left until the deadline.
	Terminating Phase = "terminating"
	// Terminated: the pod's containers are stopped; on restart only its
	// cleanup remains.
	Terminated Phase = "terminated"
)

func (p Phase) valid() bool {
	return p == Running || p == Terminating || p == Terminated
}

// PodRecord is one static pod as the checkpoint holds it.
type PodRecord struct {
	UID types.UID `json:"uid"`
	// Source and Origin say where the pod came from: the source name and
	// the manifest's file path or URL.
	Source podtypes.Source `json:"source"`
	Origin string          `json:"origin,omitempty"`
	// Hash is the static pod's config hash.
	Hash string `json:"hash"`
	// Pod is the pod as last accepted from its source, defaults applied.
	Pod *corev1.Pod `json:"pod"`
	// Phase and Deadline: a terminating pod must be stopped by Deadline.
	Phase    Phase     `json:"phase"`
	Deadline time.Time `json:"deadline,omitzero"`
	// Final is the status a pod that completed (it ran to Succeeded or
	// Failed while its source still listed it) ended with; set only with
	// Phase Terminated. Such a pod never runs again under its UID.
	Final *corev1.PodStatus `json:"final,omitempty"`
	// Updated is when the pod was last accepted from its source.
	Updated time.Time `json:"updated"`
}

func (r PodRecord) validate() error {
	switch {
	case r.UID == "":
		return fmt.Errorf("%w: no UID", ErrInvalidRecord)
	case r.Pod == nil:
		return fmt.Errorf("%w: pod %s: no pod", ErrInvalidRecord, r.UID)
	case !r.Phase.valid():
		return fmt.Errorf("%w: pod %s: unknown phase %q", ErrInvalidRecord, r.UID, r.Phase)
	case r.Final != nil && r.Phase != Terminated:
		return fmt.Errorf("%w: pod %s: a final status in phase %q", ErrInvalidRecord, r.UID, r.Phase)
	}
	return nil
}

// Change is one write: Record stores the pod's record whole, replacing
// what the store held of UID; a nil Record deletes UID (an unknown UID is
// not an error).
type Change struct {
	UID    types.UID
	Record *PodRecord
}

// Store is the checkpoint's interface. Every method is one transaction: a
// crash leaves either the old or the new state, never a mix.
type Store interface {
	// Apply writes every change in one transaction, in order. A change with
	// an invalid record fails the whole call (ErrInvalidRecord) and
	// writes nothing.
	Apply(changes []Change) error
	// List returns every record, sorted by UID. Records that cannot be
	// decoded are skipped and reported in the error (ErrCorruptRecord),
	// alongside the records that could.
	List() ([]PodRecord, error)
	// Close releases the store.
	Close() error
}

func validateChanges(changes []Change) error {
	for _, c := range changes {
		if c.Record == nil {
			continue
		}
		if c.Record.UID != c.UID {
			return fmt.Errorf("%w: change for pod %s carries the record of %s", ErrInvalidRecord, c.UID, c.Record.UID)
		}
		if err := c.Record.validate(); err != nil {
			return err
		}
	}
	return nil
}
