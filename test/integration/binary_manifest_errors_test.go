package integration

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// A broken manifest dropped beside running pods changes nothing else, and
// the local API says which file and which field.
func TestBinaryBrokenManifestChangesNothingElse(t *testing.T) {
	h := newAgent(t)
	h.writeManifest(testPod("steady", shContainer("main", sleepForever)))
	h.writeManifest(testPod("keeper", shContainer("main", sleepForever)))
	h.waitPod("steady", "running", 60*time.Second, runningContainer("main"))
	h.waitPod("keeper", "running", 60*time.Second, runningContainer("main"))
	before := map[string]string{"steady": h.runningIDs("steady")["main"], "keeper": h.runningIDs("keeper")["main"]}

	// A new file with an unknown field; and the keeper's own file broken:
	// its pod must keep running as it was.
	h.writeRaw("typo.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: typo}\nspec:\n  containers:\n  - name: c\n    image: x\n    imagePullPolicy: Never\n    comand: [sh]\n"))
	h.writeRaw("keeper.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: keeper}\nspec:\n  containers:\n  - name: main\n    image: \"\"\n"))

	var errs localapi.ManifestErrors
	deadline := time.Now().Add(20 * time.Second)
	for {
		var err error
		errs, err = h.client.ManifestErrors(context.Background())
		if err == nil && len(errs.Files) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("manifest errors = %+v, %v; want the two broken files", errs, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	byFile := map[string]localapi.ManifestError{}
	for _, e := range errs.Files {
		byFile[filepath.Base(e.Origin)] = e
	}
	if e := byFile["typo.yaml"]; !strings.Contains(e.Message, "comand") || e.Reason != "UnknownField" {
		t.Errorf("typo.yaml: %+v, want an UnknownField refusal naming comand", e)
	}
	if e := byFile["keeper.yaml"]; e.Reason != "Invalid" || !slices.Contains(e.Fields, "spec.containers[0].image") {
		t.Errorf("keeper.yaml: %+v, want Invalid naming spec.containers[0].image", e)
	}

	time.Sleep(3 * time.Second) // several relists and syncs
	for name, id := range before {
		if now := h.runningIDs(name)["main"]; now != id {
			t.Errorf("pod %s: running container %q, want %s unchanged", name, now, id)
		}
	}
	pods, err := h.client.Pods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 {
		t.Errorf("the agent shows %d pods, want the 2 running ones:\n%s", len(pods), describePods(pods, ""))
	}

	// Fixed, the typo's pod runs and its error is gone.
	h.removeManifest("typo")
	h.writeManifest(testPod("typo", shContainer("main", sleepForever)))
	h.waitPod("typo", "running", 60*time.Second, runningContainer("main"))
	errs, _ = h.client.ManifestErrors(context.Background())
	for _, e := range errs.Files {
		if filepath.Base(e.Origin) == "typo.yaml" {
			t.Errorf("typo.yaml still reported after the fix: %+v", e)
		}
	}
}
