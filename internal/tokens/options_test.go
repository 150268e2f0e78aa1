package tokens

import (
	"errors"
	"strings"
	"testing"
)

func TestNewRefusesOptionsWithoutClient(t *testing.T) {
	_, err := New(Options{})
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "Client is required") {
		t.Fatalf("New() = %v, want ErrInvalidOptions naming Client", err)
	}
}
