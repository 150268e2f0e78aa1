package config

import (
	"testing"

	"go.uber.org/goleak"
)

// Every Run ends with its context: no test may leave a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
