package app

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodeagent/nodeagent/internal/logrotation"
)

// ContainerLogs are the rotation settings of the containers' log files,
// under the kubelet's flag names.
type ContainerLogs struct {
	MaxSize         string
	MaxFiles        int
	MaxWorkers      int
	MonitorInterval time.Duration
}

func defaultContainerLogs() ContainerLogs {
	return ContainerLogs{
		MaxSize:         resource.NewQuantity(logrotation.DefaultMaxSize, resource.BinarySI).String(),
		MaxFiles:        logrotation.DefaultMaxFiles,
		MaxWorkers:      logrotation.DefaultWorkers,
		MonitorInterval: logrotation.DefaultInterval,
	}
}

func (o *Options) addContainerLogFlags(fs *pflag.FlagSet) {
	c := &o.ContainerLogs
	fs.StringVar(&c.MaxSize, "container-log-max-size", c.MaxSize, "size (a quantity: 10Mi) at which a container's log file is rotated: renamed to <file>.<timestamp>, the runtime writing on in a new file")
	fs.IntVar(&c.MaxFiles, "container-log-max-files", c.MaxFiles, "log files a container keeps, the current one included (at least 2): the oldest rotated ones are removed, all but the newest rotated one gzip-compressed")
	fs.IntVar(&c.MaxWorkers, "container-log-max-workers", c.MaxWorkers, "containers whose logs are rotated at once")
	fs.DurationVar(&c.MonitorInterval, "container-log-monitor-interval", c.MonitorInterval, "how often the containers' log sizes are checked (at least 3s); a log outgrows --container-log-max-size by what is written meanwhile")
}

// containerLogOptions are the rotation options the flags give.
func (o *Options) containerLogOptions(rt logrotation.Runtime, log logr.Logger) (logrotation.Options, error) {
	c := o.ContainerLogs
	opts := logrotation.Options{Runtime: rt, MaxFiles: c.MaxFiles, Workers: c.MaxWorkers, Interval: c.MonitorInterval, Logger: log}
	q, err := resource.ParseQuantity(c.MaxSize)
	if err != nil {
		return opts, fmt.Errorf("--container-log-max-size %q is not a quantity (10Mi, 500Ki): %w", c.MaxSize, err)
	}
	opts.MaxSize = q.Value()
	return opts, nil
}

// newLogRotation builds the part that rotates the containers' log files
// as they grow.
func (o *Options) newLogRotation(rt logrotation.Runtime, log logr.Logger) (*logrotation.Rotator, error) {
	opts, err := o.containerLogOptions(rt, log)
	if err != nil {
		return nil, err
	}
	return logrotation.New(opts)
}

// containerLogFlags name the rotation's fields as the operator sets them.
var containerLogFlags = map[string]string{
	"MaxSize":  "--container-log-max-size",
	"MaxFiles": "--container-log-max-files",
	"Workers":  "--container-log-max-workers",
	"Interval": "--container-log-monitor-interval",
}

// validateContainerLogs checks the rotation flags: the size must be a
// quantity, and the rest what the rotation itself requires.
func (o *Options) validateContainerLogs() []error {
	var errs []error
	opts, err := o.containerLogOptions(nil, logr.Discard())
	if err != nil {
		errs = append(errs, err)
		opts.MaxSize = 1 // to check the others
	}
	if err := opts.Validate(containerLogFlags); err != nil {
		errs = append(errs, err)
	}
	return errs
}
