package app

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/manifest"
)

// stdinName is how a manifest read from the standard input (-f -) is named
// in messages.
const stdinName = "<stdin>"

// addFilenameFlag adds kubectl's -f/--filename, completed with manifest
// file names.
func addFilenameFlag(cmd *cobra.Command, files *[]string, what string) {
	cmd.Flags().StringArrayVarP(files, "filename", "f", nil, what+"; - reads the standard input (at most 512 KiB, a manifest's bound)")
	_ = cmd.MarkFlagFilename("filename", manifestExtensions...)
}

// oneFile is the single manifest a command takes: -f FILE or FILE.
func oneFile(files, args []string) (string, error) {
	all := append(append([]string{}, files...), args...)
	switch len(all) {
	case 0:
		return "", usageError{fmt.Errorf("no manifest: give -f FILE, or -f - for the standard input")}
	case 1:
		return all[0], nil
	}
	return "", usageError{fmt.Errorf("one manifest at a time, not %d (%v)", len(all), all)}
}

// readStdin reads a manifest from the standard input, at most
// manifest.MaxManifestBytes.
func (c *cli) readStdin() ([]byte, error) {
	if c.in == nil {
		return nil, fmt.Errorf("%s: no standard input", stdinName)
	}
	data, err := io.ReadAll(io.LimitReader(c.in, manifest.MaxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stdinName, err)
	}
	if len(data) > manifest.MaxManifestBytes {
		return nil, fmt.Errorf("%s: larger than a manifest may be (%d bytes)", stdinName, manifest.MaxManifestBytes)
	}
	return data, nil
}

// readManifest reads and parses the manifest at path, or on the standard
// input for "-", as the agent would at origin; it returns the bytes too.
func (c *cli) readManifest(path, origin string) ([]*corev1.Pod, []byte, error) {
	if path != "-" {
		pods, err := manifest.ReadManifestFile(path, parseOptions(c.settings.NodeName, origin))
		if err != nil {
			return nil, nil, err
		}
		data, err := readBounded(path)
		return pods, data, err
	}
	data, err := c.readStdin()
	if err != nil {
		return nil, nil, err
	}
	if origin == "" || origin == "-" {
		origin = stdinName
	}
	pods, err := manifest.ParseManifest(data, parseOptions(c.settings.NodeName, origin))
	return pods, data, err
}
