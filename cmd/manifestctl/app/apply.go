package app

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/manifest"
)

// waitFlags are the flags of every command that can wait for the agent.
type waitFlags struct {
	wait    bool
	timeout time.Duration
	settle  time.Duration
}

func (w *waitFlags) add(cmd *cobra.Command, what string) {
	cmd.Flags().BoolVar(&w.wait, "wait", false, "wait until "+what)
	cmd.Flags().DurationVar(&w.timeout, "timeout", 2*time.Minute, "how long --wait waits")
	cmd.Flags().DurationVar(&w.settle, "settle", -1, "how long a container must have been seen running before --wait counts it running; by default "+
		watchedSettle.String()+" from when the agent reports that it watches the container's process (it then reports the process's exit at once), else one relist interval of the agent (--relist-interval) and 200ms; 0 counts a container running as soon as the agent has started it")
}

// watchedSettle is the default settle of a container whose process the
// agent watches, counted from when it first says so. The agent says so
// only of a process it found alive once it watched it, and reports its
// exit the moment it happens. Of 20 containers that exit at once
// (BenchmarkCrashVisibleAfterRunning), most are gone before the agent
// watches them; the latest exit of one shown watched came 5 ms after, on
// an idle machine. Under load (the integration suite beside the race
// tests on 2 cores) a shell's three commands took over 15 ms: the settle
// keeps a margin of 20 times the idle figure.
const watchedSettle = 100 * time.Millisecond

// settle is how long --wait wants a container seen running before it
// counts it running, so that one that exits at once fails the wait.
type settle struct {
	// watched applies from when the agent first says it watches the
	// container's process; unwatched from when the container is first
	// seen running, to a container whose exit the agent sees at its relist.
	watched, unwatched time.Duration
}

// settleFor is --settle for every container, or its default.
func (w waitFlags) settleFor(s settings) settle {
	if w.settle >= 0 {
		return settle{watched: w.settle, unwatched: w.settle}
	}
	return settle{watched: watchedSettle, unwatched: s.RelistInterval + 200*time.Millisecond}
}

func newApplyCommand(c *cli) *cobra.Command {
	var w waitFlags
	var files []string
	cmd := &cobra.Command{
		Use:   "apply -f FILE|-",
		Short: "Validate a manifest and write it into the manifest directory",
		Long: `Validates FILE as the agent does, then writes it into the manifest directory
atomically: over the file that defines the same pod, or under FILE's name. The
version it replaces is kept in --backup-dir, for rollback. With --wait, follows
the agent until the new pod generation runs (exit 0) or fails (exit 1, with the
reason and the last lines of the failing container's log); while it waits
longer than a second, it says on stderr what it waits for. -f - reads the
manifest from the standard input; a new one is named for its pod. FILE may
also be given without -f.`,
		Args: args(cobra.MaximumNArgs(1)),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return manifestExtensions, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := oneFile(files, args)
			if err != nil {
				return err
			}
			return c.apply(cmd.Context(), file, w)
		},
	}
	addFilenameFlag(cmd, &files, "the manifest to apply")
	w.add(cmd, "the agent runs the new pod generation, or it fails")
	return cmd
}

// plan is what apply is about to write.
type plan struct {
	source  string        // FILE as given
	data    []byte        // its bytes
	target  string        // where it goes in the manifest directory
	current *manifestFile // what target holds now, if anything
	pods    []*corev1.Pod // FILE's pods as the agent will see them at target
	same    bool          // target already holds these bytes
}

// planApply validates FILE and decides where it goes. It writes nothing.
func (c *cli) planApply(file string) (*plan, error) {
	dir, err := c.settings.manifestDir()
	if err != nil {
		return nil, err
	}
	node := c.settings.NodeName
	// Validated under its own name first, so every problem names FILE.
	pods, data, err := c.readManifest(file, file)
	if err != nil {
		return nil, err
	}
	if file == "-" {
		file = stdinName
	}
	ms, err := scanDir(dir, node)
	if err != nil {
		return nil, err
	}
	p := &plan{source: file, data: data}
	for i := range ms {
		if sharesName(pods, ms[i].Pods) == "" {
			continue
		}
		if p.current != nil {
			return nil, fmt.Errorf("%s: its pods are defined by two files already, %s and %s: remove one first", file, p.current.Path, ms[i].Path)
		}
		p.current = &ms[i]
	}
	if p.current == nil {
		name := filepath.Base(file)
		if file == stdinName {
			// A new manifest from the standard input is named for its
			// (first) pod, as the operator wrote the name.
			decoded, err := manifest.DecodeManifest(data)
			if err != nil || len(decoded) == 0 {
				return nil, fmt.Errorf("%s: a manifest from the standard input is named for its pod, and it has none", file)
			}
			name = decoded[0].Name + ".yaml"
		}
		if !manifest.IsManifestName(name) {
			return nil, fmt.Errorf("%s: the agent reads only files named *.yaml, *.yml or *.json, not hidden or backup files: rename it", file)
		}
		p.target = filepath.Join(dir, name)
		for i := range ms {
			if ms[i].Path != p.target {
				continue
			}
			if ms[i].Err == nil {
				return nil, fmt.Errorf("%s: %s defines other pods (%v); applying would replace them: rename %s, or rm them first", file, p.target, fullNames(ms[i].Pods), name)
			}
			p.current = &ms[i] // a refused file: replacing it is the fix
		}
	} else {
		p.target = p.current.Path
	}
	// Every other file must leave the pods' names free, or the agent
	// refuses the second definition.
	for _, m := range ms {
		if m.Path != p.target {
			if n := sharesName(pods, m.Pods); n != "" {
				return nil, fmt.Errorf("%s: pod %s is already defined by %s", file, n, m.Path)
			}
		}
	}
	if p.pods, err = manifest.ParseManifest(data, parseOptions(node, p.target)); err != nil {
		return nil, err
	}
	if old, err := readBounded(p.target); err == nil && bytes.Equal(old, data) {
		p.same = true
	}
	return p, nil
}

func (c *cli) apply(ctx context.Context, file string, w waitFlags) error {
	p, err := c.planApply(file)
	if err != nil {
		return err
	}
	if abs, err := filepath.Abs(file); err == nil && abs == p.target && file != "-" {
		p.same = true // FILE is the manifest itself, already edited in place
	}
	if p.same {
		fmt.Fprintf(c.out, "%s unchanged\n", p.target)
	} else {
		if err := backup(c.settings.BackupDir, p.target); err != nil {
			return err
		}
		if err := writeAtomic(p.target, p.data, fileMode(p.target)); err != nil {
			return err
		}
		verb := "created"
		if p.current != nil {
			verb = "configured"
		}
		fmt.Fprintf(c.out, "%s %s\n", p.target, verb)
	}
	return c.maybeWaitRunning(ctx, p.target, p.pods, w)
}

// maybeWaitRunning waits, with --wait, until the agent runs pods.
func (c *cli) maybeWaitRunning(ctx context.Context, target string, pods []*corev1.Pod, w waitFlags) error {
	client, err := connect(ctx, c.settings.LocalAPISocket)
	if err != nil {
		if w.wait {
			return fmt.Errorf("nodeagent is not running (%v): the manifest is written, and it starts when the agent does; --wait cannot wait for it", err)
		}
		sayOffline(c.errOut, err, "the manifest is written; it starts when the agent does")
		return nil
	}
	defer client.Close()
	if !w.wait {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	return c.waitRunning(ctx, client, target, pods, w.settleFor(c.settings))
}
