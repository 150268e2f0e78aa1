// Command hollowcri serves a fake CRI runtime (k8s.io/cri-client's fake
// remote runtime: the RuntimeService and ImageService of cri-api's fakes)
// on a unix socket, so that a real nodeagent can run against it as a
// hollow node: hack/scale.sh starts one per node, many on one machine.
//
// Sandboxes are READY with an address as soon as they are run; containers
// are RUNNING, with a start time, as soon as they are started; any image
// "pulls" at once and is then present. Nothing runs: no process, mount or
// network namespace is made. The fakes record every call for tests to
// assert on; a long-running server forgets them periodically, so that its
// memory stays bounded.
//
//	hollowcri --endpoint=/run/hollow/node-1.sock
package main
