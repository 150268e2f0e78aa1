package manifest

import (
	"errors"
	"strings"
	"testing"
)

func TestUnknownFieldSuggestsTheKnownName(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a container field", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: w\nspec:\n  containers:\n  - name: c\n    image: i\n    imagePullPolicyy: Always\n",
			`spec.containers[0].imagePullPolicyy: Forbidden: unknown field; did you mean "imagePullPolicy"?`},
		{"a pod spec field", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: w\nspec:\n  restartPolcy: Never\n  containers:\n  - name: c\n    image: i\n",
			`spec.restartPolcy: Forbidden: unknown field; did you mean "restartPolicy"?`},
		{"a field of an inlined struct", "apiVersion: v1\nkind: Pod\nmetadata:\n  nmae: w\nspec:\n  containers:\n  - name: c\n    image: i\n",
			`metadata.nmae: Forbidden: unknown field; did you mean "name"?`},
		{"a top-level field", "apiVersion: v1\nkind: Pod\nmetdata:\n  name: w\nspec:\n  containers:\n  - name: c\n    image: i\n",
			`metdata: Forbidden: unknown field; did you mean "metadata"?`},
		{"an item of a pod list", "apiVersion: v1\nkind: PodList\nitems:\n- metadata:\n    name: a\n  spec:\n    containers:\n    - name: c\n      imag: i\n",
			`items[0].spec.containers[0].imag: Forbidden: unknown field; did you mean "image"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeManifest([]byte(tt.in))
			if !errors.Is(err, ErrStrict) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("DecodeManifest = %v; want an unknown field refusal containing %q", err, tt.want)
			}
		})
	}
}

func TestUnknownFieldFarFromEveryNameSuggestsNothing(t *testing.T) {
	_, err := DecodeManifest([]byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: w\nspec:\n  containers:\n  - name: c\n    image: i\n    zzzzzzzz: 1\n"))
	if !errors.Is(err, ErrStrict) || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("DecodeManifest = %v; want an unknown field refusal with no suggestion", err)
	}
}

func TestBadQuantityNamesItsFieldAndValue(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a limit", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: w\nspec:\n  containers:\n  - name: c\n    image: i\n    resources:\n      limits:\n        memory: 12MBs\n",
			`spec.containers[0].resources.limits.memory: Invalid value: "12MBs": must be a quantity`},
		{"a request in JSON", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w"},"spec":{"containers":[{"name":"a","image":"i"},{"name":"b","image":"i","resources":{"requests":{"cpu":"half"}}}]}}`,
			`spec.containers[1].resources.requests.cpu: Invalid value: "half"`},
		{"an emptyDir size limit", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: w\nspec:\n  volumes:\n  - name: v\n    emptyDir:\n      sizeLimit: 1 GB\n  containers:\n  - name: c\n    image: i\n",
			`spec.volumes[0].emptyDir.sizeLimit: Invalid value: "1 GB"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeManifest([]byte(tt.in))
			var me *ManifestError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "regular expression") {
				t.Fatalf("DecodeManifest = %v; want a refusal containing %q and no regular expression", err, tt.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"image", "imag", 1}, {"nmae", "name", 2}, {"kitten", "sitting", 3}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
