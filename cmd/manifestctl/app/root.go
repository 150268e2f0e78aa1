package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"
)

// Exit codes, as kubectl's: 0 success, 1 failure (and, for diff, "there
// are differences"), 2 bad usage, and for diff above 1 an error.
const (
	exitOK        = 0
	exitFailure   = 1
	exitUsage     = 2
	exitDiffError = 2
)

// cli holds what every command shares.
type cli struct {
	settings settings
	in       io.Reader // what -f - reads
	out      io.Writer
	errOut   io.Writer
}

// exitError ends a command with a code and nothing more to print (the
// command printed what it had to say).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is bad usage: a wrong argument or flag.
type usageError struct{ error }

// codedError is an error that ends the command with its own exit code.
type codedError struct {
	error
	code int
}

// Main runs manifestctl with args (without the program name) and returns
// its exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}

func run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) int {
	c := &cli{in: in, out: out, errOut: errOut}
	// -v's log goes to the command's stderr.
	klog.LogToStderr(false)
	klog.SetOutput(errOut)
	defer klog.Flush()
	root := c.newRootCommand()
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(errOut)
	err := root.ExecuteContext(ctx)
	var ee *exitError
	var ue usageError
	var ce codedError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ce):
		fmt.Fprintf(errOut, "error: %v\n", ce.error)
		return ce.code
	case errors.As(err, &ue):
		fmt.Fprintf(errOut, "error: %v\nSee 'manifestctl --help'.\n", ue.error)
		return exitUsage
	}
	fmt.Fprintf(errOut, "error: %v\n", err)
	return exitFailure
}

func (c *cli) newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "manifestctl",
		Short: "Manage the static pods of a node run by nodeagent",
		Long: `manifestctl manages the static pod manifests of a node: it validates them with
the agent's own code, writes them atomically, waits until the agent runs them,
and shows what the agent does with them (through its local API).

Its defaults come from nodeagent's config file (--config).`,
		Version:       version.Get().GitVersion,
		SilenceUsage:  true,
		SilenceErrors: true,
		// A word that is no command is bad usage, as kubectl's.
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) > 0 {
				return usageError{fmt.Errorf("unknown command %q for %q", a[0], cmd.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if isCompletionRequest(cmd) || cmd.Name() == "version" {
				return nil
			}
			return c.settings.load(cmd.Root().PersistentFlags())
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	c.settings.addFlags(root.PersistentFlags())
	// The shell completes the files and directories these flags name.
	_ = root.MarkPersistentFlagFilename("config", "yaml", "yml")
	for _, dir := range []string{"manifest-dir", "root-dir", "pod-log-dir", "backup-dir"} {
		_ = root.MarkPersistentFlagDirname(dir)
	}
	addVerbosityFlags(root.PersistentFlags())
	root.AddCommand(
		newValidateCommand(c),
		newDiffCommand(c),
		newApplyCommand(c),
		newRollbackCommand(c),
		newRmCommand(c),
		newGetCommand(c),
		newDescribeCommand(c),
		newLogsCommand(c),
		newVersionCommand(c),
	)
	return root
}

// args wraps a cobra argument check so that its failure is bad usage.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return usageError{err}
		}
		return nil
	}
}
