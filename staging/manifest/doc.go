// Package manifest reads static pod manifests: strict decoding of one YAML
// or JSON document, the core/v1 defaults, the static pod identity, and
// validation, under bounds that keep any manifest cheap. It is what the
// file and HTTP sources of staging/config apply to every manifest, and all
// that a tool checking or writing manifests (manifestctl, an importer)
// needs: it imports no client-go, starts no goroutine and watches nothing.
//
//	pods, err := manifest.ReadManifestFile("/etc/nodeagent/manifests/web.yaml",
//		manifest.ParseOptions{NodeName: node, Source: podtypes.FileSource})
//	var me *manifest.ManifestError
//	if errors.As(err, &me) {
//		fmt.Println(me.Reason, me.Field()) // UnknownField spec.containers[0].imagee
//	}
//
// # Manifests
//
// ParseManifest is strict decoding of one YAML or JSON document holding a
// v1 Pod or PodList (unknown and duplicate fields refused), the core/v1
// defaults, the static pod identity (name <name>-<node>, namespace
// default, a UID hashing the defaulted manifest, node and origin, the
// source, hash, seen and origin annotations) and validation.
// DecodeManifest is the decoding alone. A refusal is a *ManifestError
// naming the origin, each offending field and why; it matches ErrManifest
// and a reason's sentinel with errors.Is. ReadManifestFile reads and parses
// one file as the file source does, ReadFile reads its bytes with the same
// bounds, and IsManifestName tells which names the file source reads, for
// tools that check or write manifests before the agent sees them.
//
// # Limits and encodings
//
// Every manifest is bounded, whatever its source:
//
//   - MaxManifestBytes (512 KiB) per manifest: a file of the file source, a
//     body of the HTTP source (Content-Length or the bytes read), the data
//     given to DecodeManifest and ParseManifest. A source may be configured
//     lower, not higher. It is a third of etcd's 1.5 MiB object limit (the
//     apiserver takes 3 MiB requests), leaving a pod from any manifest room
//     to be stored as a mirror pod; and it is a hundred times a real
//     control plane pod.
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
// the byte offset and line), UTF-16 without a byte-order mark (told by the
// zero in every other byte, wherever the text starts) or behind a UTF-8
// one, UTF-32.
//
// Decoding errors name the fix: an unknown field suggests the known field
// of the type at that path closest to it in edit distance ("did you mean
// \"imagePullPolicy\"?", from the JSON tags of the Go types); a quantity
// that does not parse is named by its path and value, not by the
// quantity's regular expression.
//
// YAML is read with the YAML 1.1 rules kubectl and the apiserver use
// ("yes" is true, 0644 is 420), once: the tree is written out as JSON and
// the JSON decoded once into the typed objects.
package manifest
