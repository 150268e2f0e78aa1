package manifest

import (
	"encoding/json"
	"reflect"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// sameAsSigsYAML checks that yamlToJSON reads text as sigs.k8s.io/yaml
// (what kubectl and the apiserver use) does. Unless both must read it, a
// text either refuses is not compared.
func sameAsSigsYAML(t *testing.T, text []byte, mustRead bool) {
	t.Helper()
	mine, err := yamlToJSON(text)
	theirs, err2 := sigsyaml.YAMLToJSONStrict(text)
	if err != nil || err2 != nil {
		if mustRead {
			t.Fatalf("%q: yamlToJSON: %v; sigs.k8s.io/yaml: %v", text, err, err2)
		}
		return
	}
	var a, b any
	if err := json.Unmarshal(mine, &a); err != nil {
		t.Fatalf("yamlToJSON wrote invalid JSON %q: %v", mine, err)
	}
	if err := json.Unmarshal(theirs, &b); err != nil {
		t.Fatalf("sigs.k8s.io/yaml wrote invalid JSON %q: %v", theirs, err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("yamlToJSON(%q) =\n%s\nsigs.k8s.io/yaml:\n%s", text, mine, theirs)
	}
}

// trickyYAML are documents whose values YAML 1.1 reads in its own way;
// they also seed FuzzDecodeManifest.
var trickyYAML = []string{
	"a: yes\nb: no\nc: on\nd: off\ne: y\nf: True\ng: 'yes'\n",
	"mode: 0644\nhex: 0x1F\nbin: 0b101\nneg: -12\nbig: 12345678901234567890\nunderscore: 1_000\n",
	"f: 1.5\ng: 1e3\nh: -0.0\ni: 6.02e+23\nj: .5\nk: 1e21\nl: 1e-7\n",
	"n: ~\nm: null\no: \nq: ''\n",
	"when: 2001-12-14\nts: 2001-12-14t21:59:43.10-05:00\n",
	"bin: !!binary aGVsbG8=\nraw: !!str 123\n",
	"1: one\ntrue: t\n1.5: f\n",
	"base: &b {x: 1, y: 2}\nderived: {<<: *b, z: 3}\nlist: [*b, *b]\n",
	"block: |\n  line one\n  line \"two\"\nfolded: >\n  a\n  b\nesc: \"tab\\there \\u00e9 \\\\ \\x01\"\n",
	"unicode: café 🚀\nctrl: \"\\u0000\\u001f\"\nquote: 'it''s'\n",
	"nested: [[1, [2, {a: [3]}]], {}]\nempty: []\n",
}

func TestYAMLToJSONReadsYAMLAsKubectlDoes(t *testing.T) {
	for _, text := range trickyYAML {
		sameAsSigsYAML(t, []byte(text), true)
	}
}
