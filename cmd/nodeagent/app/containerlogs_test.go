package app

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

func TestContainerLogFlags(t *testing.T) {
	o, err := parseArgs(t, "--manifest-dir=/m")
	if err != nil {
		t.Fatal(err)
	}
	def, err := o.containerLogOptions(nil, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if def.MaxSize != 10<<20 || def.MaxFiles != 5 || def.Workers != 1 || def.Interval.Seconds() != 10 {
		t.Errorf("defaults %+v, want the kubelet's: 10Mi, 5 files, 1 worker, 10s", def)
	}
	o, err = parseArgs(t, "--manifest-dir=/m", "--container-log-max-size=500Ki", "--container-log-max-files=3",
		"--container-log-max-workers=4", "--container-log-monitor-interval=5s")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := o.containerLogOptions(nil, logr.Discard()); got.MaxSize != 500<<10 || got.MaxFiles != 3 || got.Workers != 4 || got.Interval.Seconds() != 5 {
		t.Errorf("flags read as %+v", got)
	}

	_, err = parseArgs(t, "--manifest-dir=/m", "--container-log-max-size=lots", "--container-log-max-files=1",
		"--container-log-max-workers=0", "--container-log-monitor-interval=1s")
	if err == nil {
		t.Fatal("bad flags accepted")
	}
	for _, want := range []string{"--container-log-max-size \"lots\" is not a quantity", "--container-log-max-files must be at least 2",
		"--container-log-max-workers must be at least 1", "--container-log-monitor-interval must be at least 3s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if _, err := parseArgs(t, "--manifest-dir=/m", "--container-log-max-size=-1Mi"); err == nil || !strings.Contains(err.Error(), "--container-log-max-size must be positive") {
		t.Errorf("a negative size: %v", err)
	}
}
