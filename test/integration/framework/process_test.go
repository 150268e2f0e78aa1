package framework

import (
	"os"
	"testing"
)

func TestProcessIdentity(t *testing.T) {
	self := processOf(os.Getpid())
	if self.start == "" || !self.alive() {
		t.Fatalf("this process %+v: not alive", self)
	}
	// The same PID with another start time is another process: a reused PID.
	if (process{pid: self.pid, start: self.start + "0"}).alive() {
		t.Error("a reused PID counts as the process that had it before")
	}
}
