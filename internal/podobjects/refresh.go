package podobjects

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// refreshCheckInterval is how often the pods whose tokens are due a
// refresh are looked for: a token is rewritten within this of its
// refresh time (80 % of its life), well before it expires.
const refreshCheckInterval = 10 * time.Second

// refreshTokens tells the listener, until ctx ends, of each pod one of whose
// tokens is due: its sync rewrites the token files, asking for a new token.
func (o *Objects) refreshTokens(ctx context.Context) {
	if o.listener == nil {
		return
	}
	t := o.opts.Clock.NewTicker(refreshCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		for _, uid := range o.dueForRefresh(o.opts.Clock.Now()) {
			o.listener.ObjectsReady(uid)
		}
	}
}

func (o *Objects) dueForRefresh(now time.Time) []types.UID {
	o.mu.RLock()
	defer o.mu.RUnlock()
	var due []types.UID
	for uid := range o.authorized {
		if at, ok := o.tokens.NextRefresh(uid); ok && !at.After(now) {
			due = append(due, uid)
		}
	}
	return due
}
