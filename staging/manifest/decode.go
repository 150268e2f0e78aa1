package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// DecodeManifest strictly decodes one manifest: a single YAML or JSON
// document holding a v1 Pod or PodList, at most MaxManifestBytes, in UTF-8
// (or UTF-16 with a byte-order mark). It neither defaults nor validates the
// pods (ParseManifest does). Every error is a *ManifestError.
//
// The manifest is parsed once: YAML is read into a tree and written out as
// JSON, JSON is taken as it is, and the JSON is decoded once into the typed
// objects, refusing unknown and duplicate fields.
func DecodeManifest(data []byte) ([]*corev1.Pod, error) {
	if len(data) > MaxManifestBytes {
		return nil, refuse(ReasonTooLarge, "%d bytes, the limit is %d (MaxManifestBytes)", len(data), MaxManifestBytes)
	}
	text, err := utf8Text(data)
	if err != nil {
		return nil, err
	}
	if isBlank(text) {
		return nil, refuse(ReasonEmpty, "no content")
	}
	jsonData := text
	if !isJSONObject(text) {
		if jsonData, err = yamlToJSON(text); err != nil {
			return nil, err
		}
	}
	// A look at the type first: it says what to decode into, and whether
	// the document is an object at all.
	var tm metav1.TypeMeta
	if err := json.Unmarshal(jsonData, &tm); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, refuse(ReasonSyntax, "%v (at byte offset %d)", err, se.Offset)
		}
		return nil, refuse(ReasonSyntax, "the document is not an object: %v", err)
	}
	if errs := checkTypeMeta(tm, nil, "Pod", "PodList"); len(errs) > 0 {
		return nil, refuseFields(ReasonKind, errs)
	}
	if tm.Kind == "PodList" {
		return podListItems(jsonData)
	}
	pod := &corev1.Pod{}
	if err := decodeStrict(jsonData, pod); err != nil {
		return nil, err
	}
	pod.TypeMeta = metav1.TypeMeta{}
	return []*corev1.Pod{pod}, nil
}

func podListItems(jsonData []byte) ([]*corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := decodeStrict(jsonData, list); err != nil {
		return nil, err
	}
	if len(list.Items) > maxPodListItems {
		return nil, refuseFields(ReasonTooLarge, field.ErrorList{field.TooMany(field.NewPath("items"), len(list.Items), maxPodListItems)})
	}
	pods := make([]*corev1.Pod, len(list.Items))
	var errs field.ErrorList
	for i := range list.Items {
		p := &list.Items[i]
		// Items may leave out their type; what they state must fit.
		ip := field.NewPath("items").Index(i)
		if p.APIVersion != "" && p.APIVersion != "v1" {
			errs = append(errs, field.NotSupported(ip.Child("apiVersion"), p.APIVersion, []string{"v1"}))
		}
		if p.Kind != "" && p.Kind != "Pod" {
			errs = append(errs, field.NotSupported(ip.Child("kind"), p.Kind, []string{"Pod"}))
		}
		p.TypeMeta = metav1.TypeMeta{}
		pods[i] = p
	}
	if len(errs) > 0 {
		return nil, refuseFields(ReasonKind, errs)
	}
	return pods, nil
}

// isBlank reports whether text holds only whitespace.
func isBlank(text []byte) bool {
	return len(bytes.TrimSpace(text)) == 0
}

// isJSONObject reports whether text starts, after whitespace, with '{'. A
// JSON object is also YAML, but reading it as JSON is much cheaper.
func isJSONObject(text []byte) bool {
	for _, c := range text {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}

func checkTypeMeta(tm metav1.TypeMeta, p *field.Path, kinds ...string) field.ErrorList {
	var errs field.ErrorList
	switch tm.APIVersion {
	case "v1":
	case "":
		errs = append(errs, field.Required(p.Child("apiVersion"), "must be v1"))
	default:
		errs = append(errs, field.NotSupported(p.Child("apiVersion"), tm.APIVersion, []string{"v1"}))
	}
	switch {
	case tm.Kind == "":
		errs = append(errs, field.Required(p.Child("kind"), "must be one of "+strings.Join(kinds, ", ")))
	case !contains(kinds, tm.Kind):
		errs = append(errs, field.NotSupported(p.Child("kind"), tm.Kind, kinds))
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	strictFieldRE = regexp.MustCompile(`^(unknown|duplicate) field "(.*)"$`)
	typeFieldRE   = regexp.MustCompile(`cannot unmarshal (\S+) into Go struct field [A-Za-z0-9_]+\.(\S+) of type (\S+)`)
)

// decodeStrict decodes JSON into obj as the apiserver does (field names
// matched case-sensitively), turning unknown and duplicate fields into
// field errors and type mismatches into syntax errors naming the field.
func decodeStrict(data []byte, obj any) error {
	strictErrs, err := kjson.UnmarshalStrict(data, obj)
	root := reflect.TypeOf(obj)
	if err != nil {
		// A quantity's decoder says only that some quantity is wrong:
		// find which, and with what value.
		var tree any
		if json.Unmarshal(data, &tree) == nil {
			if errs := badQuantities(tree, root, nil); len(errs) > 0 {
				return refuseFields(ReasonSyntax, errs)
			}
		}
		if m := typeFieldRE.FindStringSubmatch(err.Error()); m != nil {
			return refuseFields(ReasonSyntax, field.ErrorList{field.TypeInvalid(field.NewPath(m[2]), field.OmitValueType{},
				"want "+m[3]+", got "+m[1])})
		}
		return refuse(ReasonSyntax, "%v", err)
	}
	if len(strictErrs) == 0 {
		return nil
	}
	me := &ManifestError{Reason: ReasonStrict}
	var other []string
	for _, e := range strictErrs {
		if m := strictFieldRE.FindStringSubmatch(e.Error()); m != nil {
			detail := m[1] + " field"
			if m[1] == "unknown" {
				if s := suggestField(root, m[2]); s != "" {
					detail += fmt.Sprintf("; did you mean %q?", s)
				}
			}
			me.Fields = append(me.Fields, &field.Error{Type: field.ErrorTypeForbidden, Field: m[2], Detail: detail})
			continue
		}
		other = append(other, e.Error())
	}
	me.Detail = strings.Join(other, "; ")
	return me.capFields()
}

// oneLine folds a multi-line parser message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
