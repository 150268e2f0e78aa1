// Package config is where a node agent learns which pods to run: three
// sources (a directory of static pod manifests, an HTTP URL, the
// apiserver) feeding a Merger that emits one typed stream of
// podtypes.PodUpdate.
//
//	merger := config.NewMerger(config.MergerOptions{Mode: config.Incremental, Logger: log})
//	files, err := config.NewFileSource(config.FileOptions{Path: "/etc/nodeagent/manifests", NodeName: node, Sink: merger})
//	api, err := config.NewAPIServerSource(config.APIServerOptions{Pods: cs.CoreV1().Pods(metav1.NamespaceAll), NodeName: node, Sink: merger})
//	go files.Run(ctx) // every source's Run ends with ctx
//	go api.Run(ctx)
//	for u := range merger.Updates() { ... } // until ctx ends
//	ready := merger.SeenAllSources(podtypes.FileSource, podtypes.APIServerSource)
//
// # Sources
//
// Each source sends its complete set of pods (a SET) to a Sink whenever it
// changes. The file source watches its directory with inotify and reads a
// file once it has been quiet for a few milliseconds (Debounce), re-reading
// only that file, in the background (two files at a time), so that a large
// manifest being parsed does not delay the pickup of a small one; a
// periodic full re-read catches what inotify cannot see. Without inotify
// (a host whose inotify instances are used up) the re-reads are all there
// is, and each tries for inotify again.
// Hidden files, editor swap, backup and temporary files, and names without
// a manifest extension are ignored. A missing directory counts as no pods
// and is retried with backoff. Two files defining one pod full name are
// settled by one rule, whatever order their events arrive in: the file
// that holds the name keeps it while it defines it (so a running pod is
// never displaced; FileOptions.Holders carries this across a restart), a
// name nobody holds goes to the file whose path sorts first, and the other
// file is refused with an error naming both. A read that looks transient
// (a file that held pods gone, or empty, or changing while read) is looked
// at again after SettleDelay before it counts, so a tool that truncates or
// deletes and rewrites a manifest never stops its pod; and one file's pods
// change at most once per ChangeInterval (1 s), with its newest content,
// so a file rewritten in a loop cannot make its pod flap. The HTTP source
// polls; it names its URL only redacted (RedactURL), sends its headers and
// the URL's userinfo only to the URL's server, and follows at most 5
// redirects, to http and https URLs only. The apiserver source is a
// reflector over the pods bound to this node. It takes a
// PodListerWatcher, which a clientset's CoreV1().Pods(metav1.NamespaceAll)
// is, rather than the clientset: this package does not import the
// clientset, whose scheme registers every API group (about 10 MiB of
// memory in every binary that links it).
//
// # Manifests
//
// The file and HTTP sources read each manifest with staging/manifest's
// ParseManifest (strict decoding, defaults, the static pod identity,
// validation, and the bounds on size, YAML values and list lengths; see
// that package). A refusal is a *manifest.ManifestError naming the origin,
// each offending field and why. A refused file never changes other pods,
// and a file that turns invalid keeps its last accepted pods until it is
// fixed or removed. FileSource.Errors and HTTPSource.Err tell what is
// refused now; every refusal is also logged, counted and sent to the
// EventRecorder. FileOptions.MaxFileBytes and HTTPOptions.MaxBodyBytes may
// lower manifest.MaxManifestBytes, not raise it; the file source parses in
// the background, so a large manifest never delays the pickup of other
// files.
//
// # Merging
//
// The Merger keeps each source's pods apart and finds, for every update,
// what was added, updated (spec, labels, deletion fields, annotations other
// than config.seen), deleted gracefully, removed, or changed in status only
// (reconciled). How that is reported depends on the Mode: Incremental,
// Snapshot or SnapshotAndUpdates. A source is seen after its first SET.
// Only one non-mirror pod may hold a full name across all sources: a later
// claimant is refused, reported, listed by Refused, and admitted once the
// name is free.
//
// # Metrics
//
// NewMetrics registers pickup latency (file event to update sent),
// refusals by source and reason, and updates by source and operation on a
// registry the caller passes; nothing is registered globally.
package config
