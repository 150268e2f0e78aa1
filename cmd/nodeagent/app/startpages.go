package app

import (
	"context"
	"time"

	"github.com/go-logr/logr"

	"github.com/nodeagent/nodeagent/internal/exepages"
)

// startPagesDelay is how long after the agent is first ready it gives back
// the pages of its executable that only its start touched: long enough for
// the first syncs, the Node's registration and the first watches.
const startPagesDelay = 10 * time.Second

// releaseStartPages waits until ready says the agent is ready, then
// startPagesDelay more, and releases the executable's start-up pages
// (package exepages) once. It returns when done or when ctx ends.
func releaseStartPages(ctx context.Context, ready func() error, log logr.Logger) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for ready() != nil {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(startPagesDelay):
	}
	before, after, err := exepages.Release()
	if err != nil {
		log.Info("could not give back the executable's start-up pages", "err", err.Error())
		return
	}
	log.Info("gave back the executable's pages only the start used; they stay in the page cache", "rssBeforeMiB", before>>20, "rssAfterMiB", after>>20)
}
