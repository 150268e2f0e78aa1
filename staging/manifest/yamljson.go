package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// yamlToJSON reads the one YAML document of text and writes it as JSON.
//
// It parses the text once, with the YAML 1.1 library kubectl and the
// apiserver use (sigs.k8s.io/yaml wraps it), so values mean what they mean
// there ("yes" is true, 0644 is 420), and writes the tree straight to JSON:
// sigs.k8s.io/yaml would copy the tree once more and marshal it by
// reflection, which costs several times the memory. Documents holding only
// comments do not count.
func yamlToJSON(text []byte) ([]byte, error) {
	if err := checkYAMLNodes(text); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.SetStrict(true) // duplicate keys
	var doc any
	docs := 0
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, yamlError(err)
		}
		if v == nil {
			continue // blank, comments only, or null
		}
		if docs++; docs == 1 {
			doc = v
		}
	}
	switch docs {
	case 0:
		return nil, refuse(ReasonEmpty, "only comments or blank YAML documents")
	case 1:
	default:
		return nil, refuse(ReasonKind, "the file holds %d YAML documents; a manifest holds one Pod (or one PodList)", docs)
	}
	// JSON takes a little more room than YAML: quotes, braces.
	out, err := appendJSON(make([]byte, 0, len(text)+len(text)/4), doc)
	if errors.Is(err, errJSONTooLarge) {
		return nil, refuse(ReasonTooLarge, "the document makes more than %d bytes of JSON: its aliases (*name) repeat too much", maxJSONBytes)
	}
	if err != nil {
		var pe *jsonPathError
		if errors.As(err, &pe) {
			return nil, refuseFields(pe.reason, field.ErrorList{&field.Error{Type: pe.typ, Field: pe.path(), BadValue: field.OmitValueType{}, Detail: pe.detail}})
		}
		return nil, err
	}
	return out, nil
}

// yamlError classifies a YAML library error: duplicate keys are strict
// errors, everything else is syntax. Of a list of errors, the first
// maxFieldErrors are told.
func yamlError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return refuse(ReasonSyntax, "%s", oneLine(err.Error()))
	}
	dup := true
	for _, e := range te.Errors {
		dup = dup && strings.Contains(e, "already set in map")
	}
	reason := ReasonSyntax
	if dup {
		reason = ReasonStrict
	}
	told := te.Errors[:min(len(te.Errors), maxFieldErrors)]
	me := refuse(reason, "%s", strings.Join(told, "; "))
	me.omitted = len(te.Errors) - len(told)
	return me
}

// maxJSONBytes bounds the JSON a YAML document makes. Spelled out, a
// manifest is at most about twice as long in JSON as in YAML (quotes,
// escapes); more means aliases repeat large values, which the YAML library
// bounds by count, not by size: a 100 KiB string repeated by 100,000
// aliases would make 10 GB.
const maxJSONBytes = 4 * MaxManifestBytes

var errJSONTooLarge = errors.New("the JSON is too large")

// jsonPathError is a value that has no JSON form, with the path to it,
// built as the writer unwinds.
type jsonPathError struct {
	reason   Reason
	typ      field.ErrorType
	detail   string
	segments []string // innermost first
}

func (e *jsonPathError) Error() string { return e.path() + ": " + e.detail }

func (e *jsonPathError) path() string {
	var b strings.Builder
	for i := len(e.segments) - 1; i >= 0; i-- {
		s := e.segments[i]
		if b.Len() > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

func within(err error, segment string) error {
	var pe *jsonPathError
	if errors.As(err, &pe) {
		pe.segments = append(pe.segments, segment)
	}
	return err
}

// appendJSON appends the JSON form of a value the YAML library decoded.
// Map keys are written sorted, so that the same document always yields the
// same JSON and the same error messages.
func appendJSON(b []byte, v any) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		if len(b)+len(v) > maxJSONBytes {
			return nil, errJSONTooLarge
		}
		return appendJSONString(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case uint64:
		return strconv.AppendUint(b, v, 10), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &jsonPathError{reason: ReasonSyntax, typ: field.ErrorTypeInvalid, detail: fmt.Sprintf("%v has no JSON form", v)}
		}
		j, _ := json.Marshal(v) // a finite float always marshals
		return append(b, j...), nil
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if len(b) > maxJSONBytes {
				return nil, errJSONTooLarge
			}
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSON(b, e); err != nil {
				return nil, within(err, "["+strconv.Itoa(i)+"]")
			}
		}
		return append(b, ']'), nil
	case map[any]any:
		type pair struct {
			key   string
			value any
		}
		pairs := make([]pair, 0, len(v))
		for k, e := range v {
			ks, err := jsonKey(k)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, pair{ks, e})
		}
		slices.SortFunc(pairs, func(a, b pair) int { return strings.Compare(a.key, b.key) })
		b = append(b, '{')
		for i, p := range pairs {
			if len(b) > maxJSONBytes {
				return nil, errJSONTooLarge
			}
			if i > 0 {
				if p.key == pairs[i-1].key { // 1 and "1", say
					return nil, &jsonPathError{reason: ReasonStrict, typ: field.ErrorTypeDuplicate, detail: "two keys that JSON spells the same (1 and \"1\", say)", segments: []string{p.key}}
				}
				b = append(b, ',')
			}
			b = appendJSONString(b, p.key)
			b = append(b, ':')
			if b, err = appendJSON(b, p.value); err != nil {
				return nil, within(err, p.key)
			}
		}
		return append(b, '}'), nil
	}
	return nil, &jsonPathError{reason: ReasonSyntax, typ: field.ErrorTypeInvalid, detail: fmt.Sprintf("a YAML value of type %T has no JSON form", v)}
}

// jsonKey spells a YAML map key as a JSON object key, as sigs.k8s.io/yaml
// does: JSON keys are strings.
func jsonKey(k any) (string, error) {
	switch k := k.(type) {
	case string:
		return k, nil
	case int:
		return strconv.Itoa(k), nil
	case int64:
		return strconv.FormatInt(k, 10), nil
	case uint64:
		return strconv.FormatUint(k, 10), nil
	case bool:
		return strconv.FormatBool(k), nil
	case float64:
		switch {
		case math.IsNaN(k):
			return ".nan", nil
		case math.IsInf(k, 1):
			return ".inf", nil
		case math.IsInf(k, -1):
			return "-.inf", nil
		}
		return strconv.FormatFloat(k, 'g', -1, 32), nil
	}
	return "", &jsonPathError{reason: ReasonSyntax, typ: field.ErrorTypeInvalid, detail: fmt.Sprintf("a map key of type %T has no JSON form", k)}
}

// appendJSONString appends s as a JSON string. Bytes that are not UTF-8
// (a !!binary value can hold any) become U+FFFD, as encoding/json does.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || n != 1 {
				i += n
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xF])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
