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
	// Updated is when the record last changed.
	Updated time.Time `json:"updated"`
}

func (r PodRecord) validate() error {
	switch {
	case r.UID == "":
		return fmt.Errorf("%w: no UID", ErrInvalidRecord)
	case r.Pod == nil:
		return fmt.Errorf("%w: pod %s: no pod", ErrInvalidRecord, r.UID)
	case r.Phase != "" && !r.Phase.valid():
		return fmt.Errorf("%w: pod %s: unknown phase %q", ErrInvalidRecord, r.UID, r.Phase)
	}
	return nil
}

// inherit fills an unset phase from the stored record old (nil if none),
// or starts the pod Running: re-accepting a manifest does not revive a pod
// that is terminating.
func (r PodRecord) inherit(old *PodRecord) PodRecord {
	if r.Phase != "" {
		return r
	}
	r.Phase, r.Deadline = Running, time.Time{}
	if old != nil {
		r.Phase, r.Deadline = old.Phase, old.Deadline
	}
	return r
}

// Store is the checkpoint's interface. Every method is one transaction: a
// crash leaves either the old or the new state, never a mix.
type Store interface {
	// PutPod stores a pod as accepted from its source. A record without a
	// phase keeps the phase it had, or starts Running.
	PutPod(rec PodRecord) error
	// SetPhase records a lifecycle change; deadline matters for Terminating.
	SetPhase(uid types.UID, phase Phase, deadline time.Time) error
	// Delete forgets a pod; deleting an unknown UID is not an error.
	Delete(uid types.UID) error
	// List returns every record, sorted by UID. Records that cannot be
	// decoded are skipped and reported in the error (ErrCorruptRecord),
	// alongside the records that could.
	List() ([]PodRecord, error)
	// Close releases the store.
	Close() error
}
