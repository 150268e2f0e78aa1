package manifest_test

import (
	"fmt"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func ExampleParseManifest() {
	_, err := manifest.ParseManifest([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},
		"spec":{"containers":[{"name":"a","image":"nginx"},{"name":"a","image":""}]}}`),
		manifest.ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: "/etc/nodeagent/manifests/web.json"})
	fmt.Println(err)
	// Output:
	// /etc/nodeagent/manifests/web.json: pod is invalid: spec.containers[1].name: Duplicate value: "a"; spec.containers[1].image: Required value: a container needs an image
}
