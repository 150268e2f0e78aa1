package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Housekeeping removes the directories of pods that are gone, and only
// those: an entry of <root>/pods whose name is no pod UID is not the
// agent's to remove.
func TestHousekeepingLeavesForeignDirectories(t *testing.T) {
	e := newTestEnv(t)
	pods := filepath.Join(e.rootDir, "pods")
	for _, name := range []string{"lost+found", "not_a_uid", "deadbeef"} {
		if err := os.MkdirAll(filepath.Join(pods, name, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.ready.Store(true)
	e.start()
	e.eventually("the gone pod's directory is removed", func() bool {
		_, err := os.Stat(filepath.Join(pods, "deadbeef"))
		return os.IsNotExist(err)
	})
	time.Sleep(100 * time.Millisecond) // five more housekeeping periods
	for _, name := range []string{"lost+found", "not_a_uid"} {
		if _, err := os.Stat(filepath.Join(pods, name, "data")); err != nil {
			t.Errorf("%s: %v, want it kept", name, err)
		}
	}
}
