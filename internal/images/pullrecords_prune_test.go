package images

import (
	"context"
	"errors"
	"os"
	"testing"
)

// listing is a runtime that holds the images ids; during, if set, runs
// while the runtime lists.
func listing(during func(), ids ...string) func(context.Context) ([]string, error) {
	return func(context.Context) ([]string, error) {
		if during != nil {
			during()
		}
		return ids, nil
	}
}

// The records of the images the runtime no longer holds go, in memory and
// on disk; the others stay and still decide.
func TestPruneRemovesTheRecordsOfImagesGone(t *testing.T) {
	const otherID = "sha256:4567"
	dir := t.TempDir()
	p := openRecords(t, dir, NeverVerifyPreloadedImages)
	for _, id := range []string{imageID, otherID} {
		if err := p.Pulled(privateRepo, id, secretAuth("a", "regcred", "uid-1", "s3cret")); err != nil {
			t.Fatal(err)
		}
	}
	n, err := p.Prune(context.Background(), listing(nil, otherID, "sha256:preloaded"))
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1 record pruned", n, err)
	}
	if _, err := os.Stat(p.recordPath(imageID)); !os.IsNotExist(err) {
		t.Errorf("the pruned record's file is still there: %v", err)
	}
	for name, records := range map[string]*PullRecords{"in memory": p, "read again": openRecords(t, dir, NeverVerifyPreloadedImages)} {
		if _, ok := records.records[imageID]; ok {
			t.Errorf("%s: the record of an image gone is kept", name)
		}
		if !records.MustPull(privateRef, privateRepo, otherID, holding()) {
			t.Errorf("%s: the record of a present image was lost: a pod without the secret may use it", name)
		}
	}
}

// Records read back at the agent's start are pruned as the others: the
// images may have gone while the agent was down.
func TestPruneAtStart(t *testing.T) {
	dir := t.TempDir()
	if err := openRecords(t, dir, NeverVerifyPreloadedImages).Pulled(privateRepo, imageID, nil); err != nil {
		t.Fatal(err)
	}
	restarted := openRecords(t, dir, NeverVerifyPreloadedImages)
	if n, err := restarted.Prune(context.Background(), listing(nil)); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want the record read at start pruned", n, err)
	}
	if _, ok := openRecords(t, dir, NeverVerifyPreloadedImages).records[imageID]; ok {
		t.Error("the pruned record is read again")
	}
}

// A pull recorded while the runtime lists may be missing from the list:
// its record stays, even when the pull changed nothing in it (the image
// was removed and pulled again with the same credentials).
func TestPruneKeepsARecordWrittenWhileListing(t *testing.T) {
	p := openRecords(t, t.TempDir(), NeverVerifyPreloadedImages)
	auth := secretAuth("a", "regcred", "uid-1", "s3cret")
	if err := p.Pulled(privateRepo, imageID, auth); err != nil {
		t.Fatal(err)
	}
	pulledAgain := func() {
		if err := p.Pulled(privateRepo, imageID, auth); err != nil {
			t.Error(err)
		}
	}
	if n, err := p.Prune(context.Background(), listing(pulledAgain)); err != nil || n != 0 {
		t.Fatalf("Prune = %d, %v; want the record written during the list kept", n, err)
	}
	if !p.MustPull(privateRef, privateRepo, imageID, holding()) {
		t.Error("the record was lost: a pod without the secret may use the image")
	}
	// The next prune, listed after that pull, decides.
	if n, err := p.Prune(context.Background(), listing(nil)); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
}

// A runtime that cannot list prunes nothing.
func TestPruneWithoutAListRemovesNothing(t *testing.T) {
	p := openRecords(t, t.TempDir(), NeverVerifyPreloadedImages)
	if err := p.Pulled(privateRepo, imageID, nil); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("runtime down")
	n, err := p.Prune(context.Background(), func(context.Context) ([]string, error) { return nil, failed })
	if !errors.Is(err, failed) || n != 0 {
		t.Fatalf("Prune = %d, %v; want 0 and the runtime's error", n, err)
	}
	if _, ok := p.records[imageID]; !ok {
		t.Error("a record went without a list")
	}
}
