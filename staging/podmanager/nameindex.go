package podmanager

import "slices"

// nameIndex maps a pod full name to the UIDs of the pods that carry it, in
// the order they were last added or updated. Usually one UID; two while a
// replaced static pod or a re-created mirror overlaps with its predecessor.
// The latest one is the one a lookup by name returns.
type nameIndex[U ~string] map[string][]U

// put records uid under name as the latest entry.
func (ix nameIndex[U]) put(name string, uid U) {
	if last, ok := ix.latest(name); ok && last == uid {
		return // the common update: nothing moves
	}
	ix[name] = append(ix.without(name, uid), uid)
}

// drop removes uid from name, leaving other UIDs of that name in place.
func (ix nameIndex[U]) drop(name string, uid U) {
	if uids := ix.without(name, uid); len(uids) > 0 {
		ix[name] = uids
	} else {
		delete(ix, name)
	}
}

// latest returns the most recently put UID under name.
func (ix nameIndex[U]) latest(name string) (U, bool) {
	uids := ix[name]
	if len(uids) == 0 {
		var zero U
		return zero, false
	}
	return uids[len(uids)-1], true
}

func (ix nameIndex[U]) without(name string, uid U) []U {
	uids := ix[name]
	if i := slices.Index(uids, uid); i >= 0 {
		return slices.Delete(uids, i, i+1)
	}
	return uids
}
