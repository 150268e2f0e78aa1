package statusmanager

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewReportsEveryInvalidOption(t *testing.T) {
	_, err := New(Options{ResyncInterval: -time.Second})
	want := []string{"Pods is required", "Statuses is required", "ResyncInterval is negative"}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != len(want) {
		t.Fatalf("New() = %v, want %d problems reported at once", err, len(want))
	}
	for _, e := range joined.Unwrap() {
		if !errors.Is(e, ErrInvalidOptions) {
			t.Errorf("%v does not wrap ErrInvalidOptions", e)
		}
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("New() = %v, want it to say %q", err, w)
		}
	}
}
