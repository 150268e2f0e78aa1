package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	// --logging-format=json: component-base offers the format but leaves
	// registering it (and linking zap) to the command.
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"

	"github.com/nodeagent/nodeagent/internal/configfile"
)

// Exit codes of Main.
const (
	exitOK    = 0
	exitError = 1 // the agent failed to start or failed while running
	exitUsage = 2 // bad flags or settings
)

// Main runs the nodeagent command with the given arguments (without the
// program name) and returns its exit code.
func Main(args []string) int {
	o := NewOptions()
	fs := pflag.NewFlagSet("nodeagent", pflag.ContinueOnError)
	fs.SortFlags = false
	o.AddFlags(fs)
	verflag.AddFlags(fs)
	fs.SetOutput(os.Stderr)
	fs.Usage = func() { usage(os.Stderr, fs) }

	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	// Before the config file adds its settings: these are about the
	// command line alone.
	warnings := commandLineWarnings(fs, o)
	var notes []string
	if err == nil {
		verflag.PrintAndExitIfRequested()
		notes, err = settle(fs, o)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nodeagent: %v\nRun 'nodeagent --help' for the flags.\n", err)
		return exitUsage
	}

	logs.InitLogs()
	defer logs.FlushLogs()
	if err := logsapi.ValidateAndApply(o.Logging, nil); err != nil {
		fmt.Fprintf(os.Stderr, "nodeagent: logging: %v\n", err)
		return exitUsage
	}
	log := klog.Background().WithName("nodeagent")
	for _, w := range warnings {
		log.Info("Warning: " + w)
	}
	for _, n := range notes {
		log.Info(n)
	}

	// The first SIGTERM or SIGINT stops the agent and leaves the pods
	// running; once it is stopping, a second signal kills the process.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()

	if err := Run(ctx, o, log); err != nil {
		log.Error(err, "nodeagent stopped on an error")
		logs.FlushLogs()
		fmt.Fprintf(os.Stderr, "nodeagent: %v\n", err)
		return exitError
	}
	log.Info("nodeagent stopped; the pods keep running")
	return exitOK
}

// settle completes the parsed command line with the config file it names,
// and checks the result. The notes are about kubelet flags and fields it
// ignores, for the log.
func settle(fs *pflag.FlagSet, o *Options) (notes []string, err error) {
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: every setting is a --flag", fs.Args())
	}
	if err := checkCommandLine(fs, o); err != nil {
		return nil, err
	}
	if notes, err = checkKubeletFlags(fs); err != nil {
		return nil, err
	}
	if o.ConfigFile != "" {
		fileNotes, err := configfile.Apply(fs, o.ConfigFile)
		if err != nil {
			return nil, err
		}
		notes = append(notes, fileNotes...)
	}
	o.complete()
	return notes, o.Validate()
}

func usage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprint(w, `nodeagent runs static pods on a local CRI runtime (containerd), taking them
from a directory of manifests and/or a URL. Stopping it leaves the pods
running; the next nodeagent adopts them.

Usage:
  nodeagent --manifest-dir DIR [--manifest-url URL] [flags]

Flags:
`)
	fmt.Fprint(w, fs.FlagUsages())
}
