package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

func newDescribeCommand(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a pod's manifest, status, containers and timeline",
		Long: `Shows where pod NAME comes from, its status and containers, and its timeline:
what the agent did with it and why (accepted, started, restarted, stopped,
refused). Without a running agent, shows the pod's manifest.`,
		Args:              args(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completePodNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.describe(cmd.Context(), args[0])
		},
	}
}

func (c *cli) describe(ctx context.Context, name string) error {
	client, err := connect(ctx, c.settings.LocalAPISocket)
	if err != nil {
		sayOffline(c.errOut, err, "showing the manifest")
		return c.describeOffline(name)
	}
	defer client.Close()
	ns, n := "default", name
	if a, b, ok := strings.Cut(name, "/"); ok {
		ns, n = a, b
	}
	d, err := client.Pod(ctx, ns, n)
	if errors.Is(err, localapi.ErrNotFound) && !strings.HasSuffix(n, "-"+c.settings.NodeName) {
		d, err = client.Pod(ctx, ns, n+"-"+c.settings.NodeName)
	}
	if errors.Is(err, localapi.ErrNotFound) {
		// Perhaps refused before it became a pod: say why.
		if errs, eerr := client.ManifestErrors(ctx); eerr == nil {
			for _, e := range errs.Files {
				if strings.Contains(e.Message, n) || strings.Contains(e.Origin, n) {
					fmt.Fprintf(c.out, "Manifest:  %s\nRefused:   %s\nMessage:   %s\n", escapeTerminal(e.Origin), e.Reason, escapeTerminal(e.Message))
					return nil
				}
			}
		}
		return fmt.Errorf("pod %s/%s not found", ns, n)
	}
	if err != nil {
		return err
	}
	printDetail(c.out, d)
	return nil
}

func printDetail(w io.Writer, d localapi.PodDetail) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, escapeTerminal(v))
		}
	}
	line("Name", d.Name)
	line("Namespace", d.Namespace)
	line("UID", d.UID)
	line("Source", d.Source)
	line("Manifest", d.Origin)
	line("Config hash", d.ConfigHash)
	if d.StartTime != nil {
		line("Start time", d.StartTime.Format(time.RFC3339))
	}
	line("Status", statusOf(d.Pod))
	line("Reason", d.Reason)
	line("Message", d.Message)
	line("Worker", d.WorkerPhase)
	line("IP", d.PodIP)
	if d.Restored {
		line("Restored", "from the checkpoint at start")
	}
	if d.Adopted {
		line("Adopted", "its containers were found running at start and kept")
	}
	_ = tw.Flush()
	for _, group := range []struct {
		title string
		cts   []localapi.Container
	}{{"Init containers", d.InitContainers}, {"Containers", d.Containers}} {
		if len(group.cts) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s:\n", group.title)
		for _, ct := range group.cts {
			fmt.Fprintf(w, "  %s:\n", ct.Name)
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "    Image:\t%s\n", ct.Image)
			fmt.Fprintf(tw, "    Container ID:\t%s\n", ct.ContainerID)
			state := ct.State
			if r := join(ct.Reason, ct.Message); r != "" {
				state += " (" + r + ")"
			}
			if ct.ExitCode != nil {
				state += fmt.Sprintf(", exit code %d", *ct.ExitCode)
			}
			fmt.Fprintf(tw, "    State:\t%s\n", escapeTerminal(state))
			if ct.Process != "" {
				// What apply --wait's settle counts from.
				fmt.Fprintf(tw, "    Process:\t%s\n", ct.Process)
			}
			if lt := ct.LastTermination; lt != nil {
				fmt.Fprintf(tw, "    Last state:\tterminated (%s), exit code %d\n", escapeTerminal(join(lt.Reason, lt.Message)), lt.ExitCode)
			}
			fmt.Fprintf(tw, "    Ready:\t%v\n", ct.Ready)
			fmt.Fprintf(tw, "    Restart count:\t%d\n", ct.RestartCount)
			_ = tw.Flush()
		}
	}
	fmt.Fprintln(w, "Timeline:")
	if len(d.Timeline) == 0 {
		fmt.Fprintln(w, "  <none>")
		return
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TIME\tKIND\tMESSAGE")
	for _, e := range d.Timeline {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.Time.Format("15:04:05.000"), e.Kind, escapeTerminal(e.Message))
	}
	_ = tw.Flush()
}

func (c *cli) describeOffline(name string) error {
	m, err := c.lookup(name)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.out, "Manifest:  %s\nStatus:    unknown (nodeagent is not running)\n", m.Path)
	for _, p := range m.Pods {
		if nameMatches(p, name, c.settings.NodeName) || len(m.Pods) == 1 {
			b, _ := yaml.Marshal(p.Spec)
			fmt.Fprintf(c.out, "Pod:       %s/%s (uid %s)\nSpec:\n%s", p.Namespace, p.Name, p.UID, indent(string(b), "  "))
		}
	}
	return nil
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
