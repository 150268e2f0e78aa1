package manifest

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// utf16Bytes encodes s as UTF-16 with a byte-order mark.
func utf16Bytes(s string, bigEndian bool) []byte {
	units := utf16.Encode([]rune(s))
	out := make([]byte, 0, 2+2*len(units))
	units = append([]uint16{0xFEFF}, units...)
	for _, u := range units {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// A manifest with text beyond ASCII: a two-byte character and one that
// UTF-16 writes as a surrogate pair.
const unicodeManifest = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations: {note: \"café 🚀\"}\nspec:\n  containers:\n  - name: main\n    image: nginx:1\n"

func TestParseManifestReadsUTF16AndAUTF8ByteOrderMark(t *testing.T) {
	opts := ParseOptions{NodeName: testNode, Source: podtypes.FileSource, Origin: "/m/web.yaml"}
	want, err := ParseManifest([]byte(unicodeManifest), opts)
	if err != nil {
		t.Fatal(err)
	}
	jsonManifest := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","annotations":{"note":"café 🚀"}},"spec":{"containers":[{"name":"main","image":"nginx:1"}]}}`
	for name, data := range map[string][]byte{
		"UTF-16LE YAML":           utf16Bytes(unicodeManifest, false),
		"UTF-16BE YAML":           utf16Bytes(unicodeManifest, true),
		"UTF-16LE JSON":           utf16Bytes(jsonManifest, false),
		"UTF-16BE JSON":           utf16Bytes(jsonManifest, true),
		"UTF-8 YAML with its BOM": append([]byte("\uFEFF"), unicodeManifest...),
		"UTF-8 JSON with its BOM": append([]byte("\uFEFF"), jsonManifest...),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseManifest(data, opts)
			if err != nil {
				t.Fatalf("ParseManifest: %v", err)
			}
			// The same pod: the UID hashes the whole defaulted pod.
			if len(got) != 1 || got[0].UID != want[0].UID || got[0].Annotations["note"] != "café 🚀" {
				t.Errorf("got %+v, want the pod of the UTF-8 manifest", got)
			}
		})
	}
}

func TestDecodeManifestRefusesWhatIsNotText(t *testing.T) {
	le := utf16Bytes(unicodeManifest, false)
	unpaired := append(append([]byte{}, le[:10]...), 0x00, 0xD8, 'a', 0) // a high surrogate, then 'a'
	tests := []struct {
		name   string
		in     []byte
		detail string
	}{
		{"invalid UTF-8", []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: caf\xe9\n"), "invalid UTF-8 at byte offset 46 (line 4, byte 0xE9); a manifest must be UTF-8"},
		{"invalid UTF-8 after a BOM", []byte("\uFEFFkind: \xff"), "invalid UTF-8 at byte offset 9 (line 1, byte 0xFF)"},
		{"a truncated UTF-8 sequence", []byte("name: caf\xc3"), "invalid UTF-8 at byte offset 9 (line 1, byte 0xC3)"},
		{"UTF-16LE without a BOM", le[2:], "is UTF-16 without a byte-order mark (every other byte is zero), not UTF-8"},
		{"UTF-16BE without a BOM", utf16Bytes(unicodeManifest, true)[2:], "is UTF-16 without a byte-order mark (every other byte is zero), not UTF-8"},
		// First characters outside Latin-1 (UTF-16 units with no zero
		// byte): the zeros of the rest still tell.
		{"UTF-16LE without a BOM, starting outside Latin-1", utf16Bytes("ĉĉ: x\n"+unicodeManifest, false)[2:], "is UTF-16 without a byte-order mark"},
		{"UTF-16LE behind a UTF-8 BOM", append([]byte{0xEF, 0xBB, 0xBF}, le[2:]...), "is UTF-16 (every other byte is zero) behind a UTF-8 byte-order mark"},
		{"UTF-16 with an odd length", le[:len(le)-1], "UTF-16LE (from its byte-order mark) with an odd number of bytes"},
		{"UTF-16 with an unpaired surrogate", unpaired, "UTF-16LE (from its byte-order mark) with an unpaired surrogate at byte offset 10"},
		{"UTF-32", append([]byte{0xFF, 0xFE, 0, 0}, "k\x00\x00\x00"...), "the byte-order mark says UTF-32; save the manifest as UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeManifest(tt.in)
			var me *ManifestError
			if !errors.As(err, &me) || me.Reason != ReasonEncoding || !errors.Is(err, ErrEncoding) || !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("DecodeManifest = %v; want an encoding refusal containing %q", err, tt.detail)
			}
		})
	}
}
