package configfile

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Defaults of the settings that manifestctl reads as well as the agent.
const (
	DefaultRootDir   = "/var/lib/nodeagent"
	DefaultPodLogDir = "/var/log/pods"
	// DefaultRelistInterval is how often the agent looks at the runtime,
	// so how long it may take to notice that a container exited: the
	// PLEG's own default (pleg.DefaultInterval), which manifestctl names
	// here so as not to link the PLEG and the CRI client; a test in
	// cmd/nodeagent/app keeps the two equal.
	DefaultRelistInterval = time.Second
)

// LocalAPISocket is the local API socket's path when --local-api-socket is
// not set: in the state directory.
func LocalAPISocket(rootDir string) string {
	if rootDir == "" {
		return ""
	}
	return filepath.Join(rootDir, "nodeagent.sock")
}

// NodeName is the node's name as the agent uses it: the setting, or the
// hostname, lowercased. It is "" when neither is known.
func NodeName(setting string) string {
	if setting == "" {
		setting, _ = os.Hostname()
	}
	return strings.ToLower(setting)
}
