// Command nodeagent runs static pods from a manifest directory and an HTTP
// URL on a local CRI runtime (containerd). See app for its flags.
package main

import (
	"os"

	"github.com/nodeagent/nodeagent/cmd/nodeagent/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:]))
}
