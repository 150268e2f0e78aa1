package app

import (
	"runtime/debug"
	"testing"

	"github.com/go-logr/logr"
)

// gcPercent returns the collector's setting.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestGCPercentFollowsTheFlagUnlessGOGCIsSet(t *testing.T) {
	defer debug.SetGCPercent(gcPercent())

	setGCPercent(50, logr.Discard())
	if got := gcPercent(); got != 50 {
		t.Errorf("--gc-percent=50: collector at %d", got)
	}

	t.Setenv("GOGC", "80")
	debug.SetGCPercent(80) // as the runtime read it at start
	setGCPercent(50, logr.Discard())
	if got := gcPercent(); got != 80 {
		t.Errorf("GOGC=80 and --gc-percent=50: collector at %d, want GOGC's 80", got)
	}
}
