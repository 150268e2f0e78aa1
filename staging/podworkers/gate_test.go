package podworkers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func TestStartGate(t *testing.T) {
	type op struct {
		do   string // arrive, start, hold, leave
		uid  types.UID
		want string // start: "true"/"false"; leave: the pod to wake or ""
	}
	tests := []struct {
		name string
		ops  []op
	}{{
		name: "first in line starts; the rest wait in order",
		ops: []op{
			{"arrive", "a", ""}, {"arrive", "b", ""}, {"arrive", "c", ""},
			{"start", "b", "false"}, {"start", "a", "true"}, {"start", "a", "true"},
			{"start", "c", "false"}, {"start", "b", "false"},
		},
	}, {
		name: "leaving hands the name to the next in line",
		ops: []op{
			{"arrive", "a", ""}, {"arrive", "b", ""}, {"arrive", "c", ""},
			{"start", "a", "true"}, {"leave", "a", "b"}, {"start", "c", "false"}, {"start", "b", "true"},
			{"leave", "b", "c"}, {"start", "c", "true"}, {"leave", "c", ""},
		},
	}, {
		name: "a waiting pod that leaves is skipped",
		ops: []op{
			{"arrive", "a", ""}, {"arrive", "b", ""}, {"arrive", "c", ""},
			{"start", "a", "true"}, {"leave", "b", ""}, {"leave", "a", "c"}, {"start", "c", "true"},
		},
	}, {
		name: "the head leaving before it started wakes the next",
		ops: []op{
			{"arrive", "a", ""}, {"arrive", "b", ""}, {"leave", "a", "b"}, {"start", "b", "true"},
		},
	}, {
		name: "a pod that may be running holds a free name out of turn",
		ops: []op{
			{"arrive", "a", ""}, {"arrive", "b", ""}, {"hold", "b", ""},
			{"start", "a", "false"}, {"leave", "b", "a"}, {"start", "a", "true"},
		},
	}, {
		name: "a pod that may be running keeps its place behind a holder",
		ops: []op{
			{"arrive", "a", ""}, {"start", "a", "true"}, {"arrive", "b", ""}, {"arrive", "c", ""},
			{"hold", "b", ""}, {"leave", "a", "b"}, {"start", "c", "false"}, {"leave", "b", "c"}, {"start", "c", "true"},
		},
	}, {
		name: "leaving twice or unknown is harmless",
		ops: []op{
			{"arrive", "a", ""}, {"start", "a", "true"}, {"leave", "a", ""}, {"leave", "a", ""}, {"leave", "x", ""},
			{"arrive", "d", ""}, {"start", "d", "true"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newStartGate()
			for i, o := range tt.ops {
				var got string
				switch o.do {
				case "arrive":
					g.arrive("web_default", o.uid)
				case "start":
					if g.tryStart("web_default", o.uid) {
						got = "true"
					} else {
						got = "false"
					}
				case "hold":
					g.hold("web_default", o.uid)
				case "leave":
					next, _ := g.leave("web_default", o.uid)
					got = string(next)
				}
				if got != o.want {
					t.Fatalf("op %d: %s %s = %q, want %q", i, o.do, o.uid, got, o.want)
				}
			}
		})
	}
}

func TestStartGateKeepsNamesApartAndEmpty(t *testing.T) {
	g := newStartGate()
	g.arrive("web_default", "a")
	g.arrive("db_default", "b")
	if !g.tryStart("web_default", "a") || !g.tryStart("db_default", "b") {
		t.Fatal("pods of different names must not wait for each other")
	}
	g.leave("web_default", "a")
	g.leave("db_default", "b")
	if diff := cmp.Diff(newStartGate(), g, cmp.AllowUnexported(startGate{})); diff != "" {
		t.Errorf("gate keeps entries for names nobody holds (-want +got):\n%s", diff)
	}
}
