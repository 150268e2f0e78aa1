package node

import (
	"errors"
	"strings"
	"testing"
)

func TestOptionsNameEveryMissingField(t *testing.T) {
	err := (&Options{}).defaults()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("defaults() = %v, want ErrInvalidOptions", err)
	}
	for _, field := range []string{"Name", "Runtime", "RootDir"} {
		if !strings.Contains(err.Error(), field+" is required") {
			t.Errorf("error does not name %s:\n%v", field, err)
		}
	}
}
