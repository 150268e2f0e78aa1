package app

import (
	"strings"
	"testing"
	"time"
)

func TestImageGCFlags(t *testing.T) {
	o, err := parseArgs(t, "--manifest-dir=/m")
	if err != nil {
		t.Fatal(err)
	}
	if want := (ImageGC{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute, Period: 5 * time.Minute}); o.ImageGC != want {
		t.Errorf("defaults %+v, want the kubelet's %+v", o.ImageGC, want)
	}
	o, err = parseArgs(t, "--manifest-dir=/m", "--image-gc-high-threshold=100", "--image-gc-low-threshold=0",
		"--minimum-image-ttl-duration=1m", "--image-maximum-gc-age=1h", "--image-gc-period=1s")
	if err != nil {
		t.Fatal(err)
	}
	if want := (ImageGC{HighThresholdPercent: 100, LowThresholdPercent: 0, MinAge: time.Minute, MaxAge: time.Hour, Period: time.Second}); o.ImageGC != want {
		t.Errorf("parsed %+v, want %+v", o.ImageGC, want)
	}

	for args, want := range map[string]string{
		"--image-gc-high-threshold=101":                               "--image-gc-high-threshold 101 must be between 0 and 100, inclusive",
		"--image-gc-low-threshold=-1":                                 "--image-gc-low-threshold -1 must be between 0 and 100, inclusive",
		"--image-gc-low-threshold=85":                                 "--image-gc-low-threshold 85 must be less than --image-gc-high-threshold 85",
		"--image-gc-high-threshold=50":                                "--image-gc-low-threshold 80 must be less than --image-gc-high-threshold 50",
		"--image-minimum-gc-age=-1s":                                  "--image-minimum-gc-age -1s must not be negative",
		"--image-maximum-gc-age=-1s":                                  "--image-maximum-gc-age -1s must not be negative",
		"--image-maximum-gc-age=1m":                                   "--image-maximum-gc-age 1m0s must be greater than --image-minimum-gc-age 2m0s",
		"--image-gc-period=-1s":                                       "--image-gc-period -1s must not be negative",
		"--image-minimum-gc-age=1h --image-maximum-gc-age=30m":        "must be greater than --image-minimum-gc-age 1h0m0s",
		"--image-gc-high-threshold=90 --image-gc-low-threshold=90":    "--image-gc-low-threshold 90 must be less than --image-gc-high-threshold 90",
		"--image-gc-high-threshold=120 --image-gc-low-threshold=110":  "--image-gc-high-threshold 120 must be between 0 and 100",
		"--image-gc-high-threshold=120 --image-gc-low-threshold=-110": "--image-gc-low-threshold -110 must be between 0 and 100",
	} {
		_, err := parseArgs(t, append([]string{"--manifest-dir=/m"}, strings.Fields(args)...)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}
