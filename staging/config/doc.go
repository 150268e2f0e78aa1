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
// periodic full re-read catches what inotify cannot see.
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
// ParseManifest is what the file and HTTP sources apply to each manifest:
// strict decoding of one YAML or JSON document holding a v1 Pod or PodList
// (unknown and duplicate fields refused), the core/v1 defaults, the static
// pod identity (name <name>-<node>, namespace default, a UID hashing the
// defaulted manifest, node and origin, the source, hash, seen and origin
// annotations) and validation. A refusal is a *ManifestError naming the
// origin, each offending field and why; it matches ErrManifest and a
// reason's sentinel with errors.Is. A refused file never changes other
// pods, and a file that turns invalid keeps its last accepted pods until
// it is fixed or removed. FileSource.Errors and HTTPSource.Err tell what is
// refused now; every refusal is also logged, counted and sent to the
// EventRecorder. ReadManifestFile reads and parses one file as a
// FileSource does, and IsManifestName tells which names it reads, for tools
// (manifestctl) that check or write manifests before the agent sees them.
//
// # Limits and encodings
//
// Every manifest is bounded, whatever its source:
//
//   - MaxManifestBytes (512 KiB) per manifest: a file of the file source, a
//     body of the HTTP source (Content-Length or the bytes read), the data
//     given to DecodeManifest and ParseManifest. FileOptions.MaxFileBytes
//     and HTTPOptions.MaxBodyBytes may lower it, not raise it. It is a third
//     of etcd's 1.5 MiB object limit (the apiserver takes 3 MiB requests),
//     leaving a pod from any manifest room to be stored as a mirror pod; and
//     it is a hundred times a real control plane pod.
//   - YAML values: about 98,000, counted from the characters that begin
//     them before anything is parsed, and as aliases (*name) expand them.
//     The YAML library takes some 400 bytes a value: without this bound,
//     "args: [a,a,a,...]" in 512 KiB would cost 90 MiB. JSON, cheap to
//     decode, has no such bound.

//   - Lists: 256 pods in a PodList; 64 containers and 64 init containers;
//     256 volumes, tolerations and host aliases; 32 DNS search domains; per
//     container 1024 env vars, 256 ports and 256 volume mounts.
//
// With these, a legal manifest at the limit is decoded, defaulted and
// validated in about 60 ms of CPU with 13 MiB allocated as YAML written as
// people write it, 90 ms and 28 MiB for the most values YAML may hold, 20
// ms and 2 MiB as JSON (BenchmarkParseManifestAtLimit).
//
// A refusal for size matches ErrTooLarge and names the file or URL, the
// field and the limit ("spec.containers[0].env: Too many: 1025: must have
// at most 1024 items"). A refusal lists at most 20 offending fields and
// counts the others, so that its message stays short however bad the
// manifest.
//
// A manifest is UTF-8; a UTF-8 byte-order mark is skipped, and UTF-16 with
// a byte-order mark (what Windows editors save as "Unicode") is transcoded.
// Anything else is refused with ErrEncoding, saying why: invalid UTF-8 (with
// the byte offset and line), UTF-16 without a byte-order mark, UTF-32.
//
// YAML is read with the YAML 1.1 rules kubectl and the apiserver use
// ("yes" is true, 0644 is 420), once: the tree is written out as JSON and
// the JSON decoded once into the typed objects.
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
