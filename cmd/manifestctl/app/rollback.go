package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

func newRollbackCommand(c *cli) *cobra.Command {
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "rollback NAME|FILE",
		Short: "Put back the version of a manifest that apply or rm replaced",
		Long: `Puts back the previous version of the manifest that defines pod NAME (or of
the manifest FILE), from --backup-dir, keeping the version it replaces as the
new backup: a second rollback undoes the first. With --wait, waits as apply does.`,
		Args:              args(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completePodNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.rollback(cmd.Context(), args[0], w)
		},
	}
	w.add(cmd, "the agent runs the restored pod generation, or it fails")
	return cmd
}

func (c *cli) rollback(ctx context.Context, name string, w waitFlags) error {
	dir, err := c.settings.manifestDir()
	if err != nil {
		return err
	}
	node := c.settings.NodeName
	backups, err := scanDir(c.settings.BackupDir, node)
	if err != nil {
		return fmt.Errorf("no backups: %w", err)
	}
	b, err := findManifest(backups, c.settings.BackupDir, name, node)
	if err != nil {
		return err
	}
	data, err := readBounded(b.Path)
	if err != nil {
		return err
	}
	target := filepath.Join(dir, filepath.Base(b.Path))
	// The backup was valid once; the agent's rules may since have changed.
	p, err := c.planApply(b.Path)
	if err != nil {
		return fmt.Errorf("the backup cannot be put back: %w", err)
	}
	if p.target != target {
		return fmt.Errorf("the backup %s defines pods that %s now defines: rm that first", b.Path, p.target)
	}
	// Swap: the current version becomes the backup.
	var current []byte
	if cur, err := readBounded(target); err == nil {
		current = cur
	} else if !os.IsNotExist(err) {
		return err
	}
	mode := fileMode(b.Path)
	if err := writeAtomic(target, data, mode); err != nil {
		return err
	}
	if current != nil {
		if err := writeAtomic(b.Path, current, mode); err != nil {
			return err
		}
	} else if err := os.Remove(b.Path); err != nil {
		return err
	}
	fmt.Fprintf(c.out, "%s rolled back\n", target)
	return c.maybeWaitRunning(ctx, target, p.pods, w)
}
