package imagegc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// candidate is an image that may be removed.
type candidate struct {
	id string
	imageRecord
}

// detect updates the records from the runtime's images: a new image is
// first detected now, an image in use was last used now, an image gone is
// forgotten. It returns the images in use.
func (m *Manager) detect(ctx context.Context, now time.Time) (map[string]bool, error) {
	images, err := m.opts.Runtime.ListImages(ctx)
	if err != nil {
		return nil, err
	}
	inUse, err := m.opts.Runtime.ImagesInUse(ctx)
	if err != nil {
		return nil, err
	}
	present := make(map[string]bool, len(images))
	for _, img := range images {
		present[img.ID] = true
		r, ok := m.records[img.ID]
		if !ok {
			r = &imageRecord{firstDetected: now}
			m.records[img.ID] = r
			m.log.V(5).Info("New image", "imageID", img.ID, "tags", img.Tags)
		}
		if inUse[img.ID] {
			r.lastUsed = now
		}
		r.size, r.pinned = img.Size, img.Pinned
	}
	for id := range m.records {
		if !present[id] {
			delete(m.records, id)
		}
	}
	return inUse, nil
}

// evictionOrder detects the images and returns those that may go, least
// recently used first (never used counts as longest ago), then first
// detected first: not the images in use, pinned, or the runtime's
// sandbox image.
func (m *Manager) evictionOrder(ctx context.Context, now time.Time) ([]candidate, error) {
	inUse, err := m.detect(ctx, now)
	if err != nil {
		return nil, err
	}
	sandbox, err := m.opts.Runtime.SandboxImage(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]candidate, 0, len(m.records))
	for id, r := range m.records {
		if inUse[id] || r.pinned || id == sandbox {
			continue
		}
		out = append(out, candidate{id: id, imageRecord: *r})
	}
	slices.SortFunc(out, func(a, b candidate) int {
		if c := a.lastUsed.Compare(b.lastUsed); c != 0 {
			return c
		}
		if c := a.firstDetected.Compare(b.firstDetected); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out, nil
}

// freeOld removes the candidates unused for longer than MaxAge, once the
// Manager has watched for that long, and returns those left.
func (m *Manager) freeOld(ctx context.Context, candidates []candidate, now time.Time) ([]candidate, error) {
	if m.opts.MaxAge == 0 || now.Sub(m.started) <= m.opts.MaxAge {
		return candidates, nil
	}
	var left []candidate
	var errs []error
	for _, c := range candidates {
		if now.Sub(c.lastUsed) <= m.opts.MaxAge {
			left = append(left, c)
			continue
		}
		if err := m.remove(ctx, c, reasonAge); err != nil {
			errs = append(errs, err)
			left = append(left, c)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return left, fmt.Errorf("removing the images unused for longer than %v: %w", m.opts.MaxAge, err)
	}
	return left, nil
}

// freeSpace removes candidates in order, skipping those first detected
// less than MinAge ago, until their sizes add up to toFree. It returns
// what it freed.
func (m *Manager) freeSpace(ctx context.Context, toFree int64, now time.Time, candidates []candidate) (int64, error) {
	var freed int64
	var errs []error
	for _, c := range candidates {
		if freed >= toFree {
			break
		}
		if age := now.Sub(c.firstDetected); age < m.opts.MinAge {
			m.log.V(5).Info("Image too young to remove", "imageID", c.id, "age", age, "minAge", m.opts.MinAge)
			continue
		}
		if err := m.remove(ctx, c, reasonSpace); err != nil {
			errs = append(errs, err)
			continue
		}
		freed += int64(min(c.size, 1<<62)) // #nosec G115 -- bounded above
	}
	if err := errors.Join(errs...); err != nil {
		return freed, fmt.Errorf("wanted to free %d bytes, freed %d, and some images could not be removed: %w", toFree, freed, err)
	}
	return freed, nil
}

// remove removes one image and forgets it.
func (m *Manager) remove(ctx context.Context, c candidate, reason string) error {
	m.log.Info("Removing an unused image", "imageID", c.id, "size", c.size, "reason", reason,
		"lastUsed", c.lastUsed, "firstDetected", c.firstDetected)
	if err := m.opts.Runtime.RemoveImage(ctx, c.id); err != nil {
		m.metrics.removeFailures.Inc()
		return err
	}
	delete(m.records, c.id)
	m.removals++
	m.metrics.removed.WithLabelValues(reason).Inc()
	m.metrics.freed.WithLabelValues(reason).Add(float64(c.size))
	return nil
}
