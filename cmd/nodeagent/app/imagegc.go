package app

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/imagegc"
)

// ImageGC is the image garbage collection policy, under the kubelet's
// flag names and defaults.
type ImageGC struct {
	HighThresholdPercent int
	LowThresholdPercent  int
	MinAge, MaxAge       time.Duration
	// Period is the kubelet's fixed 5 minutes; a hidden flag lets tests
	// shorten it.
	Period time.Duration
}

func defaultImageGC() ImageGC {
	return ImageGC{
		HighThresholdPercent: imagegc.DefaultHighThresholdPercent,
		LowThresholdPercent:  imagegc.DefaultLowThresholdPercent,
		MinAge:               imagegc.DefaultMinAge,
		Period:               imagegc.DefaultPeriod,
	}
}

func (o *Options) addImageGCFlags(fs *pflag.FlagSet) {
	g := &o.ImageGC
	fs.IntVar(&g.HighThresholdPercent, "image-gc-high-threshold", g.HighThresholdPercent, "usage of the image filesystem, in percent (0 to 100), at which unused images are removed, least recently used first; 100 (with no --image-maximum-gc-age) turns image garbage collection off")
	fs.IntVar(&g.LowThresholdPercent, "image-gc-low-threshold", g.LowThresholdPercent, "usage of the image filesystem, in percent, that image garbage collection brings it under; less than --image-gc-high-threshold")
	fs.DurationVar(&g.MinAge, "image-minimum-gc-age", g.MinAge, "how long an image must have been on the node before image garbage collection may remove it")
	fs.DurationVar(&g.MaxAge, "image-maximum-gc-age", g.MaxAge, "remove an image unused for longer than this, whatever the disk usage (0: never); more than --image-minimum-gc-age")
	// The kubelet's older name of --image-minimum-gc-age.
	fs.DurationVar(&g.MinAge, "minimum-image-ttl-duration", g.MinAge, "the same as --image-minimum-gc-age")
	_ = fs.MarkDeprecated("minimum-image-ttl-duration", "use --image-minimum-gc-age") // the flag was just defined
	fs.DurationVar(&g.Period, "image-gc-period", g.Period, "time between image garbage collection passes")
	_ = fs.MarkHidden("image-gc-period") // the flag was just defined
}

// imageGCFlags name the policy's fields as the operator sets them.
var imageGCFlags = map[string]string{
	"HighThresholdPercent": "--image-gc-high-threshold",
	"LowThresholdPercent":  "--image-gc-low-threshold",
	"MinAge":               "--image-minimum-gc-age",
	"MaxAge":               "--image-maximum-gc-age",
	"Period":               "--image-gc-period",
}

// validateImageGC checks the policy by the garbage collector's own rules,
// naming the flags.
func (o *Options) validateImageGC() []error {
	if err := o.imageGCOptions(nil, nil, nil, nil, logr.Discard()).Validate(imageGCFlags); err != nil {
		return []error{err}
	}
	return nil
}

// imageGCOptions are the garbage collector's options the flags give;
// events go to rec, nil standalone; afterRemoval follows a pass that
// removed images.
func (o *Options) imageGCOptions(rt imagegc.Runtime, rec record.EventRecorder, reg metrics.KubeRegistry, afterRemoval func(context.Context), log logr.Logger) imagegc.Options {
	g := o.ImageGC
	return imagegc.Options{
		Runtime: rt, HighThresholdPercent: g.HighThresholdPercent, LowThresholdPercent: g.LowThresholdPercent,
		MinAge: g.MinAge, MaxAge: g.MaxAge, Period: g.Period,
		Recorder: rec, NodeName: o.NodeName, Registry: reg, Logger: log,
		AfterRemoval: afterRemoval,
	}
}
