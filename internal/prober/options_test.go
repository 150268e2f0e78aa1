package prober

import (
	"errors"
	"strings"
	"testing"
)

func TestNewRefusesOptionsWithoutExec(t *testing.T) {
	_, err := New(Options{})
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "Exec is required") {
		t.Fatalf("New() = %v, want ErrInvalidOptions naming Exec", err)
	}
}
