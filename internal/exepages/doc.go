// Package exepages lets a long-running process give back the pages of its
// own executable that only its start touched.
//
// A Go program's start runs the init functions of every package it links:
// for nodeagent, the registration of every Kubernetes API type with
// client-go's scheme, protobuf descriptors, flag and metric setup. Those
// pages of code and read-only data are never touched again, yet they stay
// mapped, and count in the resident set, for the process's whole life:
// about 20 MiB of nodeagent's 45. Release unmaps them (madvise
// MADV_DONTNEED on the executable's read-only mappings). They stay in the
// page cache, where the kernel can reclaim them like any unmapped file
// page, and a page touched again faults back in from there.
//
// Only read-only mappings of the executable with no private copies in
// them are released: a writable mapping holds the program's data, and a
// read-only one with private copies holds what the loader relocated before
// making it read-only (a position-independent build's); MADV_DONTNEED
// would reset both to the file's bytes.
//
//	before, after, err := exepages.Release()
package exepages
