// Package uidpatch computes the strategic merge patches the agent sends to
// the apiserver: the two-way patch from the object it last saw (or wrote)
// to the one it wants, carrying that object's UID as a precondition, so
// that an object deleted and made again under the same name is never
// patched as if it were the old one.
package uidpatch
