package imagegc

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewReportsEveryInvalidOption(t *testing.T) {
	_, err := New(Options{HighThresholdPercent: 101, MinAge: -time.Minute})
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("New() = %v, want ErrInvalidOptions", err)
	}
	for _, want := range []string{"Runtime is required", "HighThresholdPercent 101 must be between 0 and 100", "MinAge -1m0s must not be negative"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("New() = %v, want it to say %q", err, want)
		}
	}
}
