// Package workqueuerun runs the workers of a client-go rate-limited work
// queue and a periodic resync, as a controller does: the loop that the
// agent's mirror pods and pod statuses share.
//
//	workqueuerun.Run(ctx, workqueuerun.Loop[string]{
//		Queue: queue, Workers: 4, ResyncInterval: 10 * time.Second, Clock: clk,
//		Resync: func() { /* queue every key */ },
//		Sync:   func(ctx context.Context, key string) (time.Duration, error) { ... },
//	})
//
// A key whose Sync fails is retried after the queue's rate limiter's delay;
// one whose Sync asks to look again after a duration is queued again then,
// without counting as a failure. Run shuts the queue down and returns once
// every worker has ended.
package workqueuerun
