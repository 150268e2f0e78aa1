package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func newDiffCommand(c *cli) *cobra.Command {
	var files []string
	cmd := &cobra.Command{
		Use:   "diff -f FILE|-",
		Short: "Show, field by field, what applying FILE would change",
		Long: `Compares FILE, validated and defaulted as the agent will see it, with the
manifest it would replace, field by field, and says what the change does: a new
pod generation (the pod is stopped and started again) or nothing. With the agent
running, also says which generation the node runs now. Exits 0 when nothing
would change, 1 when something would, and 2 when it cannot tell (a file
that cannot be read or is not valid), as kubectl diff. -f - reads the
manifest from the standard input; FILE may also be given without -f.`,
		Args: args(cobra.MaximumNArgs(1)),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return manifestExtensions, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := oneFile(files, args)
			if err != nil {
				return err
			}
			err = c.diff(cmd.Context(), file)
			var differs *exitError
			if err != nil && !errors.As(err, &differs) {
				// An error is not "there are differences".
				return codedError{err, exitDiffError}
			}
			return err
		},
	}
	addFilenameFlag(cmd, &files, "the manifest to compare")
	return cmd
}

func (c *cli) diff(ctx context.Context, file string) error {
	p, err := c.planApply(file)
	if err != nil {
		return err
	}
	var old []*corev1.Pod
	if p.current != nil {
		old = p.current.Pods
	}
	running := map[string]string{} // pod name -> the config hash the node runs
	if client, err := connect(ctx, c.settings.LocalAPISocket); err != nil {
		sayOffline(c.errOut, err, "comparing with the manifest directory")
	} else {
		defer client.Close()
		if pods, err := client.Pods(ctx); err == nil {
			for _, rp := range pods {
				if rp.WorkerPhase != "terminated" && rp.WorkerPhase != "terminating" {
					running[rp.Name] = rp.ConfigHash
				}
			}
		}
	}
	changed := false
	for _, np := range p.pods {
		op := findPod(old, podtypes.PodFullName(np))
		fmt.Fprintf(c.out, "pod %s (%s)\n", np.Name, p.target)
		if op == nil {
			changed = true
			fmt.Fprintf(c.out, "  new pod: the agent will start it (config hash %s)\n", np.UID)
			continue
		}
		diffs := fieldDiffs(op, np)
		for _, d := range diffs {
			fmt.Fprintf(c.out, "  %s\n", d)
		}
		if op.UID == np.UID {
			fmt.Fprintf(c.out, "  no change: the pod keeps running as it is (config hash %s)\n", np.UID)
		} else {
			changed = true
			fmt.Fprintf(c.out, "  new pod generation: config hash %s -> %s; the agent stops the pod and starts it again\n", op.UID, np.UID)
		}
		if h, ok := running[np.Name]; ok && h != string(op.UID) {
			fmt.Fprintf(c.out, "  note: the node runs config hash %s, not the file's current version %s\n", h, op.UID)
		}
	}
	for _, op := range old {
		if findPod(p.pods, podtypes.PodFullName(op)) == nil {
			changed = true
			fmt.Fprintf(c.out, "pod %s (%s)\n  removed: the agent will stop it\n", op.Name, p.target)
		}
	}
	if changed {
		return &exitError{code: exitFailure}
	}
	return nil
}

func findPod(pods []*corev1.Pod, full string) *corev1.Pod {
	i := slices.IndexFunc(pods, func(p *corev1.Pod) bool { return podtypes.PodFullName(p) == full })
	if i < 0 {
		return nil
	}
	return pods[i]
}

// fieldDiffs lists the fields that differ between two pods, as JSON
// paths: "~ path: old -> new", "+ path: new", "- path: old". The
// agent's own annotations (the hash) and the UID are left out: the
// summary line says how they change.
func fieldDiffs(a, b *corev1.Pod) []string {
	strip := func(p *corev1.Pod) any {
		c := p.DeepCopy()
		c.UID = ""
		delete(c.Annotations, podtypes.ConfigHashAnnotationKey)
		var v any
		data, _ := json.Marshal(c) // a typed pod always encodes
		_ = json.Unmarshal(data, &v)
		return v
	}
	var out []string
	walkDiff("", strip(a), strip(b), func(s string) { out = append(out, s) })
	return out
}

func walkDiff(path string, a, b any, emit func(string)) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			keys := make([]string, 0, len(av)+len(bv))
			for k := range av {
				keys = append(keys, k)
			}
			for k := range bv {
				if _, ok := av[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				walkDiff(join2(path, k), av[k], bv[k], emit)
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			for i := 0; i < max(len(av), len(bv)); i++ {
				var x, y any
				if i < len(av) {
					x = av[i]
				}
				if i < len(bv) {
					y = bv[i]
				}
				walkDiff(path+"["+strconv.Itoa(i)+"]", x, y, emit)
			}
			return
		}
	}
	switch {
	case a == nil && b == nil:
	case a == nil:
		emit("+ " + path + ": " + show(b))
	case b == nil:
		emit("- " + path + ": " + show(a))
	case show(a) != show(b):
		emit("~ " + path + ": " + show(a) + " -> " + show(b))
	}
}

func join2(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
