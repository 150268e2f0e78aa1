// Package containergc garbage-collects the dead containers and sandboxes
// of the container runtime on its own period, off the agent's sync loop: a
// collection lists and removes, and may take longer than a loop iteration
// should. It never stops anything that runs.
//
//	c, err := containergc.New(containergc.Options{Runtime: rt, SourcesReady: ready, Gone: gone})
//	err = c.Run(ctx)    // a collection each Interval until ctx ends
//	c.Collect(ctx)      // one now (the eviction manager reclaiming disk)
//
// Until every source has delivered its pods, any pod may still be wanted:
// only then are the containers of pods that are Gone (neither desired nor
// possibly running) removed.
package containergc
