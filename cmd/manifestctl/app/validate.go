package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nodeagent/nodeagent/staging/manifest"
)

func newValidateCommand(c *cli) *cobra.Command {
	var files []string
	cmd := &cobra.Command{
		Use:   "validate [-f] FILE|DIR|-...",
		Short: "Check manifests with the agent's own decoding and validation",
		Long: `Decodes and validates each FILE, and each manifest of each DIR, with the code
the agent runs, and prints every problem with its file, field and reason; -
(or -f -) reads a manifest from the standard input. Exits 1 if any manifest
would be refused.`,
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return manifestExtensions, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(_ *cobra.Command, args []string) error {
			paths := append(files, args...)
			if len(paths) == 0 {
				return usageError{errors.New("no manifest: give FILE, DIR, -f FILE, or -f - for the standard input")}
			}
			return c.validate(paths)
		},
	}
	addFilenameFlag(cmd, &files, "a manifest, or a directory of manifests, to check (repeatable)")
	return cmd
}

func (c *cli) validate(paths []string) error {
	bad := 0
	check := func(path string) {
		pods, _, err := c.readManifest(path, path)
		if err != nil {
			bad++
			printRefusal(c.errOut, err)
			return
		}
		if path == "-" {
			path = stdinName
		}
		fmt.Fprintf(c.out, "%s: valid (%d pod%s: %v)\n", path, len(pods), plural(len(pods)), fullNames(pods))
	}
	for _, p := range paths {
		if p == "-" {
			check(p)
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			bad++
			fmt.Fprintf(c.errOut, "%s: %v\n", p, err)
			continue
		}
		if !fi.IsDir() {
			check(p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			bad++
			fmt.Fprintf(c.errOut, "%s: %v\n", p, err)
			continue
		}
		for _, e := range entries {
			if !e.IsDir() && manifest.IsManifestName(e.Name()) {
				check(filepath.Join(p, e.Name()))
			}
		}
	}
	if bad > 0 {
		fmt.Fprintf(c.errOut, "%d manifest%s would be refused\n", bad, plural(bad))
		return &exitError{code: exitFailure}
	}
	return nil
}

// printRefusal prints a refusal one field to a line: file, field, reason.
func printRefusal(w io.Writer, err error) {
	var me *manifest.ManifestError
	if !errors.As(err, &me) || len(me.Fields) == 0 {
		fmt.Fprintf(w, "%v\n", err)
		return
	}
	for _, f := range me.Fields {
		fmt.Fprintf(w, "%s: %s: %s\n", me.Origin, f.Field, f.ErrorBody())
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
