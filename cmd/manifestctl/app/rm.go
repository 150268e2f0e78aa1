package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
)

func newRmCommand(c *cli) *cobra.Command {
	var w waitFlags
	cmd := &cobra.Command{
		Use:     "rm NAME|FILE",
		Aliases: []string{"delete"},
		Short:   "Remove a pod's manifest from the manifest directory",
		Long: `Removes the manifest that defines pod NAME (or the manifest FILE) from the
manifest directory, keeping it in --backup-dir for rollback. With --wait, waits
until the agent has stopped its pods.`,
		Args:              args(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completePodNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.rm(cmd.Context(), args[0], w)
		},
	}
	w.add(cmd, "the agent has stopped the pods")
	return cmd
}

func (c *cli) rm(ctx context.Context, name string, w waitFlags) error {
	m, err := c.lookup(name)
	if err != nil {
		return err
	}
	if err := backup(c.settings.BackupDir, m.Path); err != nil {
		return err
	}
	if err := os.Remove(m.Path); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(m.Path)); err != nil {
		return err
	}
	fmt.Fprintf(c.out, "%s removed (kept in %s)\n", m.Path, c.settings.BackupDir)

	client, err := connect(ctx, c.settings.LocalAPISocket)
	if err != nil {
		if w.wait {
			return fmt.Errorf("nodeagent is not running (%v): the manifest is removed, and its pods stop when the agent starts; --wait cannot wait for it", err)
		}
		sayOffline(c.errOut, err, "the manifest is removed; its pods stop when the agent starts")
		return nil
	}
	defer client.Close()
	if !w.wait {
		return nil
	}
	// The pods the agent runs from this file, whichever version it runs.
	uids := map[types.UID]string{}
	pods, err := client.Pods(ctx)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if p.Origin == m.Path {
			uids[types.UID(p.UID)] = p.Name
		}
	}
	for _, p := range m.Pods {
		if _, ok := uids[p.UID]; !ok {
			uids[p.UID] = p.Name
		}
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	return c.waitGone(ctx, client, uids)
}
