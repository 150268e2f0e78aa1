package runtime

import (
	"context"
	"encoding/json"
	"fmt"
)

// ContainerPID returns the host PID of a running container's first
// process, from the runtime's verbose container status: containerd and
// CRI-O give it as "pid" in the JSON of the "info" entry.
func (r *Runtime) ContainerPID(ctx context.Context, id string) (int, error) {
	resp, err := r.rt.ContainerStatus(ctx, id, true)
	if err != nil {
		return 0, err
	}
	raw, ok := resp.GetInfo()["info"]
	if !ok {
		return 0, fmt.Errorf("container %s: the runtime's verbose status has no info", id)
	}
	var info struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(raw), &info); err != nil {
		return 0, fmt.Errorf("container %s: the runtime's verbose status: %w", id, err)
	}
	if info.PID <= 0 {
		return 0, fmt.Errorf("container %s: the runtime gives no PID: not running", id)
	}
	return info.PID, nil
}
