package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/staging/manifest"
)

func newGetCommand(c *cli) *cobra.Command {
	var o outputFlags
	var watch bool
	cmd := &cobra.Command{
		Use:     "get [NAME]",
		Aliases: []string{"list", "ls"},
		Short:   "List the node's pods and refused manifests",
		Long: `Lists the pods the agent runs, with kubectl's columns, and the manifests it
refuses, with the reason. Without a running agent, lists the manifest
directory. -o wide adds SOURCE, FILE, UID and MIRROR. The other formats are
kubectl get's, over v1 objects (a Pod for NAME, else a v1 List of Pods):
-o json, -o yaml, -o name (pod/NAME), -o jsonpath=TEMPLATE,
-o jsonpath-file=FILE, -o custom-columns=HEADER:PATH,...; with them, refused
manifests are reported on stderr.`,
		Args:              args(cobra.MaximumNArgs(1)),
		ValidArgsFunction: c.completePodNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			p, err := o.printer()
			if err != nil {
				return err
			}
			return c.get(cmd.Context(), name, getOutput{printer: p, wide: o.output == "wide", headers: !o.noHeaders}, watch)
		},
	}
	o.add(cmd)
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "after listing, print the pods again whenever they change (until interrupted)")
	return cmd
}

// getOutput is how get prints: through a cli-runtime printer, or as
// manifestctl's table (printer nil).
type getOutput struct {
	printer printers.ResourcePrinter
	wide    bool
	headers bool
}

// listing is what get finds: the pods, and the manifests refused.
type listing struct {
	// AgentRunning is false when the listing comes from the manifest
	// directory alone.
	AgentRunning bool                     `json:"agentRunning"`
	Pods         []localapi.Pod           `json:"pods"`
	Refused      []localapi.ManifestError `json:"refused"`
}

func (c *cli) get(ctx context.Context, name string, o getOutput, watch bool) error {
	client, err := connect(ctx, c.settings.LocalAPISocket)
	if err != nil {
		sayOffline(c.errOut, err, "listing the manifest directory")
	} else {
		defer client.Close()
	}
	l, err := c.list(ctx, client, name)
	if err != nil {
		return err
	}
	if err := c.print(l, o, true, name != ""); err != nil {
		return err
	}
	if name != "" && len(l.Pods) == 0 && len(l.Refused) == 0 && !watch {
		return fmt.Errorf("pod %q not found", name)
	}
	if !watch || client == nil {
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
		next, err := c.list(ctx, client, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if !reflect.DeepEqual(next, l) {
			l = next
			if err := c.print(l, o, false, name != ""); err != nil {
				return err
			}
		}
	}
}

// list gathers what get shows, from the agent or, when client is nil,
// from the manifest directory.
func (c *cli) list(ctx context.Context, client *localapi.Client, name string) (listing, error) {
	if client == nil {
		return c.listOffline(name)
	}
	pods, err := client.Pods(ctx)
	if err != nil {
		return listing{}, err
	}
	errs, err := client.ManifestErrors(ctx)
	if err != nil {
		return listing{}, err
	}
	l := listing{AgentRunning: true, Pods: []localapi.Pod{}, Refused: []localapi.ManifestError{}}
	for _, p := range pods {
		if name == "" || podNameMatches(p, name, c.settings.NodeName) {
			l.Pods = append(l.Pods, p)
		}
	}
	for _, e := range errs.Files {
		if name == "" || strings.Contains(e.Message, name) {
			l.Refused = append(l.Refused, e)
		}
	}
	if errs.HTTP != nil && name == "" {
		l.Refused = append(l.Refused, *errs.HTTP)
	}
	return l, nil
}

func (c *cli) listOffline(name string) (listing, error) {
	l := listing{Pods: []localapi.Pod{}, Refused: []localapi.ManifestError{}}
	dir, err := c.settings.manifestDir()
	if err != nil {
		return l, err
	}
	ms, err := scanDir(dir, c.settings.NodeName)
	if err != nil {
		return l, err
	}
	taken := map[string]string{}
	for _, m := range ms {
		if m.Err != nil {
			if name == "" || strings.Contains(m.Err.Error(), name) {
				l.Refused = append(l.Refused, refusalOf(m.Path, m.Err))
			}
			continue
		}
		// The agent refuses the second file to define a name.
		if n := firstTaken(m, taken); n != "" {
			l.Refused = append(l.Refused, localapi.ManifestError{Origin: m.Path, Reason: "DuplicateName",
				Message: fmt.Sprintf("%s: pod full name %s is already defined by %s", m.Path, n, taken[n])})
			continue
		}
		for _, n := range fullNames(m.Pods) {
			taken[n] = m.Path
		}
		for _, p := range m.Pods {
			if name != "" && !nameMatches(p, name, c.settings.NodeName) {
				continue
			}
			l.Pods = append(l.Pods, localapi.Pod{
				Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), Source: "file",
				ConfigHash: string(p.UID), Origin: m.Path,
			})
		}
	}
	return l, nil
}

func firstTaken(m manifestFile, taken map[string]string) string {
	for _, n := range fullNames(m.Pods) {
		if _, ok := taken[n]; ok {
			return n
		}
	}
	return ""
}

func podNameMatches(p localapi.Pod, name, node string) bool {
	if ns, n, ok := strings.Cut(name, "/"); ok {
		return p.Namespace == ns && (p.Name == n || p.Name == n+"-"+node)
	}
	return p.Name == name || p.Name == name+"-"+node
}

// print writes l in the output format; header says whether a table starts
// with its column names (not on the updates of --watch). single says that
// the operator named one pod: it prints as a Pod, not a List.
func (c *cli) print(l listing, o getOutput, header, single bool) error {
	if o.printer == nil {
		return c.printTable(l, o.wide, header && o.headers)
	}
	for _, e := range l.Refused {
		fmt.Fprintf(c.errOut, "Warning: manifest %s is refused: %s\n", escapeTerminal(e.Origin), escapeTerminal(e.Message))
	}
	obj, err := c.podObjects(l.Pods, single)
	if err != nil {
		return err
	}
	return o.printer.PrintObj(obj, c.out)
}

func (c *cli) printTable(l listing, wide, header bool) error {
	tw := tabwriter.NewWriter(c.out, 6, 4, 3, ' ', 0)
	if header {
		cols := "NAME\tREADY\tSTATUS\tRESTARTS\tAGE"
		if wide {
			cols += "\tSOURCE\tFILE\tUID\tMIRROR"
		}
		fmt.Fprintln(tw, cols)
	}
	for _, p := range l.Pods {
		row := fmt.Sprintf("%s\t%s\t%s\t%d\t%s", p.Name, ready(p), escapeTerminal(statusOf(p)), restarts(p), age(p.StartTime))
		if wide {
			// Standalone: no apiserver, no mirror pod.
			row += fmt.Sprintf("\t%s\t%s\t%s\t%s", p.Source, orNone(p.Origin), p.UID, "<none>")
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(l.Refused) > 0 {
		printRefusedTable(c.out, l.Refused, header)
	}
	if header && len(l.Pods) == 0 && len(l.Refused) == 0 {
		fmt.Fprintln(c.errOut, "No pods found.")
	}
	return nil
}

func printRefusedTable(w io.Writer, refused []localapi.ManifestError, header bool) {
	tw := tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)
	if header {
		fmt.Fprintln(w)
		fmt.Fprintln(tw, "REFUSED MANIFEST\tREASON\tMESSAGE")
	}
	for _, e := range refused {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", escapeTerminal(e.Origin), e.Reason, escapeTerminal(e.Message))
	}
	_ = tw.Flush()
}

func ready(p localapi.Pod) string {
	n := 0
	for _, ct := range p.Containers {
		if ct.Ready {
			n++
		}
	}
	if len(p.Containers) == 0 && p.Phase == "" {
		return "-"
	}
	return fmt.Sprintf("%d/%d", n, len(p.Containers))
}

func restarts(p localapi.Pod) int32 {
	var n int32
	for _, ct := range p.Containers {
		n += ct.RestartCount
	}
	return n
}

// statusOf is the STATUS column, as kubectl derives it: a container's
// reason when one is waiting or ended abnormally, else the pod's phase.
func statusOf(p localapi.Pod) string {
	switch {
	case p.WorkerPhase == "refused":
		return "Refused:" + p.Reason
	case p.WorkerPhase == "terminating":
		return "Terminating"
	case p.Phase == "":
		return "Unknown"
	}
	status := p.Phase
	if p.Reason != "" {
		status = p.Reason
	}
	for _, ct := range p.Containers {
		if ct.Reason != "" && ct.State != localapi.StateRunning && !(ct.State == localapi.StateTerminated && ct.Reason == "Completed") {
			status = ct.Reason
		}
	}
	return status
}

func age(t *time.Time) string {
	if t == nil {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(*t))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func refusalOf(path string, err error) localapi.ManifestError {
	e := localapi.ManifestError{Origin: path, Message: err.Error()}
	var me *manifest.ManifestError
	if errors.As(err, &me) {
		e.Reason = string(me.Reason)
		for _, f := range me.Fields {
			e.Fields = append(e.Fields, f.Field)
		}
	}
	return e
}
