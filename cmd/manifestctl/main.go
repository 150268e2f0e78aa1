// Command manifestctl manages the static pod manifests of a node: it
// validates, diffs, applies (and waits until the agent runs them), lists,
// describes, removes and rolls back. See app for its commands.
package main

import (
	"os"

	"github.com/nodeagent/nodeagent/cmd/manifestctl/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:]))
}
