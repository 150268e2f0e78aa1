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

// startPages gives back the executable's start-up pages (package
// exepages) once the agent is ready.
type startPages struct {
	ready func() error
	log   logr.Logger
}

// Run waits until ready says the agent is ready, then startPagesDelay
// more, and releases the pages once. It returns when done or when ctx
// ends; never an error.
func (s startPages) Run(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for s.ready() != nil {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(startPagesDelay):
	}
	before, after, err := exepages.Release()
	if err != nil {
		s.log.Info("could not give back the executable's start-up pages", "err", err.Error())
		return nil
	}
	s.log.Info("gave back the executable's pages only the start used; they stay in the page cache", "rssBeforeMiB", before>>20, "rssAfterMiB", after>>20)
	return nil
}
