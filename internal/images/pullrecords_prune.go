package images

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// Prune removes the records of the images the runtime no longer holds, as
// the kubelet's image pull manager does after image garbage collection:
// list gives the IDs of the runtime's images. A record written after list
// was called is kept whatever the list says, since its image may have been
// pulled (again) after the list was taken. It returns how many records
// went; a record whose file could not be removed stays, and is named in
// the error.
func (p *PullRecords) Prune(ctx context.Context, list func(context.Context) ([]string, error)) (int, error) {
	p.mu.Lock()
	before := p.gen
	p.mu.Unlock()
	ids, err := list(ctx)
	if err != nil {
		return 0, fmt.Errorf("pruning the image pull records: %w", err)
	}
	present := make(map[string]bool, len(ids))
	for _, id := range ids {
		present[id] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pruned := 0
	var errs []error
	for id, rec := range p.records {
		if present[id] || rec.gen > before {
			continue
		}
		if err := os.Remove(p.recordPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("image pull record of %s: %w", id, err))
			continue
		}
		delete(p.records, id)
		pruned++
	}
	return pruned, errors.Join(errs...)
}
