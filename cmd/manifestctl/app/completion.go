package app

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// completionTimeout bounds what a completion asks of the agent: a shell
// waits on it at every TAB.
const completionTimeout = 2 * time.Second

// isCompletionRequest tells cobra's hidden commands that the shell
// completion scripts call (and the completion command itself), which must
// not fail on settings: they load what they need themselves.
func isCompletionRequest(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		switch c.Name() {
		case "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return true
		}
	}
	return false
}

// completePodNames completes a pod name argument: the pods the running
// agent knows (NAMESPACE/NAME outside the default namespace), or without
// it those of the manifest directory. Only the first argument is a name.
func (c *cli) completePodNames(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	// The flags on the command line are parsed by now: read the config
	// file they name, as a command would.
	if err := c.settings.load(cmd.Root().PersistentFlags()); err != nil {
		cobra.CompDebugln("settings: "+err.Error(), false)
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	client, err := connect(ctx, c.settings.LocalAPISocket)
	if err != nil {
		cobra.CompDebugln("agent: "+err.Error(), false)
		client = nil
	} else {
		defer client.Close()
	}
	l, err := c.list(ctx, client, "")
	if err != nil {
		cobra.CompDebugln("pods: "+err.Error(), false)
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, p := range l.Pods {
		n := p.Name
		if p.Namespace != "" && p.Namespace != "default" {
			n = p.Namespace + "/" + n
		}
		if strings.HasPrefix(n, toComplete) {
			names = append(names, n)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// manifestExtensions are the file names completed where a manifest is
// expected: those the agent reads.
var manifestExtensions = []string{"yaml", "yml", "json"}
