package nodeidentity

import (
	"testing"

	"go.uber.org/goleak"
)

// client-go's certificate manager (v0.37) sleeps until its next rotation
// deadline without watching its context: after Stop, that goroutine (and
// its parent, waiting for it) ends only when the timer fires. Only a
// goroutine asleep in that very select is forgiven; one stuck anywhere
// else, such as in a CSR request, is still a leak.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("k8s.io/client-go/util/certificate.(*manager).run.func1"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/certificate.(*manager).run"),
	)
}
