package integration

import (
	"os"
	"testing"

	"github.com/nodeagent/nodeagent/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { os.Exit(framework.Run(m, &env)) }
