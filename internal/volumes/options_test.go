package volumes

import (
	"errors"
	"strings"
	"testing"
)

func TestNewRefusesOptionsWithoutRootDir(t *testing.T) {
	_, err := New(Options{})
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "RootDir is required") {
		t.Fatalf("New() = %v, want ErrInvalidOptions naming RootDir", err)
	}
}
