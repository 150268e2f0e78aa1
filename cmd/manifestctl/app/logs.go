package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

type logsFlags struct {
	container  string
	follow     bool
	previous   bool
	tail       int
	timestamps bool
}

func newLogsCommand(c *cli) *cobra.Command {
	var f logsFlags
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print a container's log, from the pod log directory",
		Long: `Prints the log of a container of pod NAME, as kubectl logs does: the current
instance, or with --previous the one before it. -c names the container when
the pod has several.`,
		Args:              args(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completePodNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.logs(cmd.Context(), args[0], f)
		},
	}
	cmd.Flags().StringVarP(&f.container, "container", "c", "", "the container (default: the pod's only container)")
	cmd.Flags().BoolVarP(&f.follow, "follow", "f", false, "keep printing what the container writes, until interrupted")
	cmd.Flags().BoolVarP(&f.previous, "previous", "p", false, "print the log of the container's previous instance")
	cmd.Flags().IntVar(&f.tail, "tail", -1, "print only the last N lines (-1: all)")
	cmd.Flags().BoolVar(&f.timestamps, "timestamps", false, "start each line with its time (RFC3339Nano)")
	return cmd
}

// logTarget is a pod's log directory and its containers' names.
type logTarget struct {
	dir        string
	containers []string
}

func (c *cli) logs(ctx context.Context, name string, f logsFlags) error {
	t, err := c.findLogs(ctx, name)
	if err != nil {
		return err
	}
	container := f.container
	if container == "" {
		if len(t.containers) != 1 {
			return usageError{fmt.Errorf("pod %s has %d containers (%s): choose one with -c", name, len(t.containers), strings.Join(t.containers, ", "))}
		}
		container = t.containers[0]
	}
	files, err := instanceLogs(t.dir, container)
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no log of container %s in %s (containers: %s)", container, t.dir, strings.Join(t.containers, ", "))
	}
	file := files[len(files)-1]
	if f.previous {
		if len(files) < 2 {
			return fmt.Errorf("container %s has no previous instance", container)
		}
		file = files[len(files)-2]
	}
	lines, err := tailLines(file, f.tail)
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(c.out, formatLine(l, f.timestamps))
	}
	if !f.follow || f.previous {
		return nil
	}
	return c.follow(ctx, file, f.timestamps)
}

// follow prints what is appended to file until ctx ends, and moves on to
// the container's next instance when one starts.
func (c *cli) follow(ctx context.Context, file string, timestamps bool) error {
	fh, err := os.Open(file) // #nosec G304 -- a log file under the pod log directory
	if err != nil {
		return err
	}
	defer func() { _ = fh.Close() }()
	if _, err := fh.Seek(0, io.SeekEnd); err != nil {
		return err
	}
	lr := newLineReader(fh)
	for {
		for {
			line, err := lr.next()
			if err != nil {
				break
			}
			fmt.Fprintln(c.out, formatLine(line, timestamps))
		}
		if next := nextInstance(file); next != "" {
			nf, err := os.Open(next) // #nosec G304 -- as above
			if err == nil {
				_ = fh.Close() // read-only: nothing to lose
				fh, file, lr = nf, next, newLineReader(nf)
				continue
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// nextInstance is the log file of the instance after file's, if any.
func nextInstance(file string) string {
	files, err := instanceLogs(filepath.Dir(filepath.Dir(file)), filepath.Base(filepath.Dir(file)))
	if err != nil {
		return ""
	}
	for i, f := range files {
		if f == file && i+1 < len(files) {
			return files[i+1]
		}
	}
	return ""
}

// findLogs finds the pod's log directory: from the agent, or without it
// from the newest directory named for the pod.
func (c *cli) findLogs(ctx context.Context, name string) (logTarget, error) {
	ns, n := "default", name
	if a, b, ok := strings.Cut(name, "/"); ok {
		ns, n = a, b
	}
	if client, err := connect(ctx, c.settings.LocalAPISocket); err == nil {
		defer client.Close()
		d, err := client.Pod(ctx, ns, n)
		if errors.Is(err, localapi.ErrNotFound) {
			d, err = client.Pod(ctx, ns, n+"-"+c.settings.NodeName)
		}
		if err == nil {
			t := logTarget{dir: podLogDir(c.settings.PodLogDir, d.Namespace, d.Name, d.UID)}
			for _, ct := range d.Containers {
				t.containers = append(t.containers, ct.Name)
			}
			return t, nil
		}
		if !errors.Is(err, localapi.ErrNotFound) {
			return logTarget{}, err
		}
	}
	var best os.FileInfo
	var bestDir string
	for _, full := range []string{n, n + "-" + c.settings.NodeName} {
		matches, _ := filepath.Glob(filepath.Join(c.settings.PodLogDir, ns+"_"+full+"_*"))
		for _, m := range matches {
			fi, err := os.Stat(m)
			if err == nil && fi.IsDir() && (best == nil || fi.ModTime().After(best.ModTime())) {
				best, bestDir = fi, m
			}
		}
	}
	if best == nil {
		return logTarget{}, fmt.Errorf("no logs of pod %s/%s in %s", ns, n, c.settings.PodLogDir)
	}
	t := logTarget{dir: bestDir}
	entries, err := os.ReadDir(bestDir)
	if err != nil {
		return logTarget{}, err
	}
	for _, e := range entries {
		if e.IsDir() {
			t.containers = append(t.containers, e.Name())
		}
	}
	return t, nil
}
