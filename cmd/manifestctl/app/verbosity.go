package app

import (
	"flag"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

// addVerbosityFlags adds klog's -v (--v) and --vmodule, as kubectl has
// them: -v=6 logs each call to the agent, -v=4 the settings read. The log
// goes to stderr; stdout stays the command's output.
func addVerbosityFlags(fs *pflag.FlagSet) {
	gfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(gfs)
	// klog's settings are global, and its flags take as default the
	// current value: each run starts from klog's own defaults.
	for name, def := range map[string]string{"v": "0", "vmodule": ""} {
		f := pflag.PFlagFromGoFlag(gfs.Lookup(name))
		_ = f.Value.Set(def) // the defaults parse
		f.DefValue = def
		if name == "v" {
			f.Shorthand = "v"
			f.Usage = "number for the log level verbosity, as kubectl's (-v=4: settings; -v=6: each call to the agent)"
		}
		fs.AddFlag(f)
	}
}
