// Package statusmanager is the agent's one writer of pod status to the
// apiserver.
//
// The agent computes each pod's status and keeps it in a status.Store; the
// Manager is told which pods' statuses changed and writes them:
//
//   - a static pod's status goes onto its mirror pod (the UID the agent
//     runs is translated to the mirror's), and only onto a mirror of the
//     same version of the pod; an API pod's onto the pod itself;
//   - only a change is written, as a strategic merge patch of the status
//     with the target's UID as a precondition, computed against what was
//     last written, so no read precedes a write;
//   - what others own in a pod's status (conditions of types the agent does
//     not compute, such as a readiness gate's, and the resource claims'
//     statuses) is written as the apiserver holds it, never removed;
//   - bursts coalesce in a work queue keyed by pod, so the newest status
//     wins; failures are retried with back-off;
//   - a periodic resync compares every status with what the apiserver
//     source's watch shows and repairs drift.
//
// Times are written at the second precision the API keeps, so that a
// status read back compares equal to the one written.
package statusmanager
