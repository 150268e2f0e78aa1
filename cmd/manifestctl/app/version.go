package app

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/component-base/version"
)

func newVersionCommand(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print manifestctl's version",
		Args:  args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(c.out, "manifestctl version %s\n", version.Get().GitVersion)
			return err
		},
	}
}
