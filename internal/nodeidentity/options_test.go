package nodeidentity

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// checkEveryProblem fails unless err joins one error per want, each
// wrapping ErrInvalidOptions, and says every want.
func checkEveryProblem(t *testing.T, err error, want ...string) {
	t.Helper()
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != len(want) {
		t.Fatalf("error %v, want %d problems reported at once", err, len(want))
	}
	for _, e := range joined.Unwrap() {
		if !errors.Is(e, ErrInvalidOptions) {
			t.Errorf("%v does not wrap ErrInvalidOptions", e)
		}
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %v, want it to say %q", err, w)
		}
	}
}

func TestNewReportsEveryInvalidOption(t *testing.T) {
	_, err := New(t.Context(), Options{BootstrapTimeout: -time.Second})
	checkEveryProblem(t, err, "NodeName is required", "Kubeconfig (--kubeconfig) is required",
		"CertDir (--cert-dir) is required", "BootstrapTimeout is negative")
}

func TestNewServingReportsEveryInvalidOption(t *testing.T) {
	id := &Identity{}
	_, err := id.NewServing(ServingOptions{KeyFile: "/etc/a.key"})
	checkEveryProblem(t, err, "Addresses", "CertFile and KeyFile", "CertDir (--cert-dir) is required")
}
