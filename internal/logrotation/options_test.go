package logrotation

import (
	"errors"
	"strings"
	"testing"
)

func TestNewReportsEveryInvalidOption(t *testing.T) {
	_, err := New(Options{})
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("New() = %v, want ErrInvalidOptions", err)
	}
	for _, want := range []string{"Runtime is required", "MaxSize must be positive", "MaxFiles must be at least 2",
		"Workers must be at least 1", "Interval must be at least 3s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("New() = %v, want it to say %q", err, want)
		}
	}
}
