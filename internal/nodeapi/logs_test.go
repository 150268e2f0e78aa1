package nodeapi

import (
	"net/url"
	"testing"
	"time"
)

func TestParseLogQuery(t *testing.T) {
	q, err := parseLogQuery(url.Values{"follow": {"true"}, "timestamps": {"1"}, "previous": {"false"}, "tailLines": {"10"}, "limitBytes": {"500"}, "sinceTime": {"2026-01-02T03:04:05Z"}})
	if err != nil {
		t.Fatal(err)
	}
	if !q.opts.Follow || !q.opts.Timestamp || q.previous || *q.opts.TailLines != 10 || *q.opts.LimitBytes != 500 || !q.opts.Since.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("parsed %+v", q)
	}
	before := time.Now()
	q, err = parseLogQuery(url.Values{"sinceSeconds": {"60"}, "tailLines": {"0"}, "stream": {"All"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := before.Sub(q.opts.Since); d < 59*time.Second || d > 61*time.Second || q.opts.TailLines == nil || *q.opts.TailLines != 0 {
		t.Errorf("sinceSeconds=60: since %v before now, tail %v", d, q.opts.TailLines)
	}
	q, err = parseLogQuery(url.Values{"stream": {"Stderr"}})
	if err != nil || q.stream != "Stderr" {
		t.Errorf("stream=Stderr: %+v %v", q, err)
	}

	for _, bad := range []url.Values{
		{"follow": {"maybe"}},
		{"tailLines": {"-1"}},
		{"limitBytes": {"0"}},
		{"sinceSeconds": {"0"}},
		{"sinceSeconds": {"5"}, "sinceTime": {"2026-01-02T03:04:05Z"}},
		{"sinceTime": {"yesterday"}},
		{"stream": {"Stdlog"}},
		{"stream": {"Stdout"}, "tailLines": {"3"}},
	} {
		if _, err := parseLogQuery(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

func TestCommandBounds(t *testing.T) {
	if _, err := command(nil); err == nil {
		t.Error("no command: accepted")
	}
	if _, err := command(make([]string, maxCommandArgs+1)); err == nil {
		t.Error("too many arguments: accepted")
	}
	if _, err := command([]string{string(make([]byte, maxCommandBytes+1))}); err == nil {
		t.Error("too many bytes: accepted")
	}
	if _, err := command([]string{"sh", "-c", "true"}); err != nil {
		t.Error(err)
	}
}
func TestContainerLogs(t *testing.T) {
	w := newWorld(t, nil)
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/containerLogs/default/web/app", 200, "now 1\nnow 2\n"},
		{"/containerLogs/default/web/app?previous=true", 200, "before\n"},
		{"/containerLogs/default/web/idle?previous=true", 400, "previous terminated container \"idle\" in pod \"web\" not found\n"},
		{"/containerLogs/default/web/done", 200, "finished\n"},
		{"/containerLogs/default/web/done?previous=true", 400, "previous terminated container \"done\" in pod \"web\" not found\n"},
		{"/containerLogs/default/web/nope", 404, "container nope is not in pod default/web\n"},
		{"/containerLogs/default/gone/app", 404, "pod default/gone does not exist\n"},
		{"/containerLogs/default/web/app?tailLines=-1", 400, "tailLines=\"-1\": want an integer of at least 0\n"},
	} {
		code, body := w.do("GET", tc.path, "alice-token")
		if code != tc.code || body != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.path, code, body, tc.code, tc.body)
		}
	}
}
