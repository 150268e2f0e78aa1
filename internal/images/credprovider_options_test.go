package images

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewCredentialProvidersReportsEveryInvalidOption(t *testing.T) {
	_, err := NewCredentialProviders(CredentialProviderOptions{Timeout: -time.Second})
	want := []string{"ConfigPath (--image-credential-provider-config) is required", "BinDir (--image-credential-provider-bin-dir) is required", "Timeout is negative"}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != len(want) {
		t.Fatalf("NewCredentialProviders() = %v, want %d problems reported at once", err, len(want))
	}
	for _, e := range joined.Unwrap() {
		if !errors.Is(e, ErrInvalidOptions) {
			t.Errorf("%v does not wrap ErrInvalidOptions", e)
		}
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("NewCredentialProviders() = %v, want it to say %q", err, w)
		}
	}
}
