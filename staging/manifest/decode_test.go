package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const goodPodJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"main","image":"nginx:1"}]}}`

func TestDecodeManifestAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"YAML pod", podManifest("web", "nginx:1"), []string{"web"}},
		{"JSON pod", goodPodJSON, []string{"web"}},
		{"YAML with comments and a leading separator", "# a comment\n---\n" + podManifest("web", "nginx:1") + "---\n# trailing\n", []string{"web"}},
		{"JSON pod list", `{"apiVersion":"v1","kind":"PodList","items":[` +
			`{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i"}]}},` +
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"i"}]}}]}`, []string{"a", "b"}},
		{"YAML pod list", "apiVersion: v1\nkind: PodList\nitems:\n- metadata:\n    name: a\n  spec:\n    containers:\n    - {name: c, image: i}\n", []string{"a"}},
		{"empty pod list", `{"apiVersion":"v1","kind":"PodList","items":[]}`, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, err := DecodeManifest([]byte(tt.in))
			if err != nil {
				t.Fatalf("DecodeManifest: %v", err)
			}
			if diff := cmp.Diff(tt.want, podNames(pods)); diff != "" {
				t.Errorf("pods (-want +got):\n%s", diff)
			}
			for _, p := range pods {
				if p.Kind != "" || p.APIVersion != "" {
					t.Errorf("pod %s keeps its type meta %v", p.Name, p.TypeMeta)
				}
			}
		})
	}
}

func TestDecodeManifestRefuses(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		reason Reason
		field  string // the first offending field, "" if the document fails as a whole
		detail string // a substring of the message
		is     error
	}{
		{"empty", "", ReasonEmpty, "", "no content", ErrEmpty},
		{"blank", " \n\t\n", ReasonEmpty, "", "no content", ErrEmpty},
		{"comments only", "# nothing\n---\n# here\n", ReasonEmpty, "", "only comments", ErrEmpty},
		{"null", "null\n", ReasonEmpty, "", "blank", ErrEmpty},
		{"JSON null", "null", ReasonEmpty, "", "blank", ErrEmpty},
		{"YAML tab indentation", "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: web\n", ReasonSyntax, "", "line 4", ErrSyntax},
		{"truncated JSON", goodPodJSON[:40], ReasonSyntax, "", "unexpected end of JSON input", ErrSyntax},
		{"JSON array", "[1, 2]", ReasonSyntax, "", "not an object", ErrSyntax},
		{"a bare string", "hello", ReasonSyntax, "", "not an object", ErrSyntax},
		{"control characters", "\x00\x01\x02 junk", ReasonSyntax, "", "control characters", ErrSyntax},
		{"binary junk", "\x00\x01\x02\xff\xfe junk", ReasonEncoding, "", "invalid UTF-8 at byte offset 3 (line 1, byte 0xFF)", ErrEncoding},
		{"alias bomb", "a: &a [1,2]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n",
			ReasonTooLarge, "", "excessive aliasing: the aliases (*name) make more than 98304 values", ErrTooLarge},
		{"wrong value type", strings.Replace(podManifest("web", "i"), "name: web", "name: 123", 1), ReasonSyntax, "metadata.name", "want string, got number", ErrSyntax},
		{"unknown field", strings.Replace(podManifest("web", "i"), "image:", "imagee:", 1), ReasonStrict, "spec.containers[0].imagee", "unknown field", ErrStrict},
		{"field in the wrong case", strings.Replace(goodPodJSON, `"image"`, `"Image"`, 1), ReasonStrict, "spec.containers[0].Image", "unknown field", ErrStrict},
		{"duplicate YAML key", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\nspec:\n  containers: [{name: c, image: i}]\n", ReasonStrict, "", `key "name" already set`, ErrStrict},
		{"duplicate JSON key", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, ReasonStrict, "metadata.name", "duplicate field", ErrStrict},
		{"wrong kind", strings.Replace(podManifest("web", "i"), "kind: Pod", "kind: Deployment", 1), ReasonKind, "kind", `"Deployment"`, ErrKind},
		{"missing kind", strings.Replace(podManifest("web", "i"), "kind: Pod\n", "", 1), ReasonKind, "kind", "Required value", ErrKind},
		{"wrong apiVersion", strings.Replace(podManifest("web", "i"), "apiVersion: v1", "apiVersion: apps/v1", 1), ReasonKind, "apiVersion", `"apps/v1"`, ErrKind},
		{"missing apiVersion", strings.Replace(podManifest("web", "i"), "apiVersion: v1\n", "", 1), ReasonKind, "apiVersion", "Required value", ErrKind},
		{"list item of another kind", `{"apiVersion":"v1","kind":"PodList","items":[{"kind":"Service","metadata":{"name":"a"}}]}`, ReasonKind, "items[0].kind", `"Service"`, ErrKind},
		{"two documents", podManifest("a", "i") + "---\n" + podManifest("b", "i"), ReasonKind, "", "holds 2 YAML documents", ErrKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, err := DecodeManifest([]byte(tt.in))
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("DecodeManifest = %d pods, %v; want a *ManifestError", len(pods), err)
			}
			if me.Reason != tt.reason || me.Field() != tt.field || !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("error %q: reason %s field %q; want reason %s, field %q, containing %q", err, me.Reason, me.Field(), tt.reason, tt.field, tt.detail)
			}
			if !errors.Is(err, tt.is) || !errors.Is(err, ErrManifest) {
				t.Errorf("error %q does not match %v and ErrManifest", err, tt.is)
			}
		})
	}
}
