package nodeapi

import (
	"errors"
	"strings"
	"testing"
)

func TestOptionsNameEveryBadField(t *testing.T) {
	err := (&Options{CertFile: "/c", Port: 70000}).validate()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("validate() = %v, want ErrInvalidOptions", err)
	}
	for _, want := range []string{"NodeName is required", "Client is required", "Runtime is required",
		"Pods is required", "NodeUsage is required", "RootDir is required", "Metrics is required", "ProbeMetrics is required",
		"Config is required", "CertFile and KeyFile", "Port 70000"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}
