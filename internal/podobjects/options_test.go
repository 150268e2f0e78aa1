package podobjects

import (
	"errors"
	"strings"
	"testing"
)

func TestNewRefusesAnUnknownStrategy(t *testing.T) {
	_, err := New(Options{Strategy: "watch"})
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), `Strategy: unknown change detection strategy "watch"`) {
		t.Fatalf("New() = %v, want ErrInvalidOptions naming Strategy", err)
	}
}
