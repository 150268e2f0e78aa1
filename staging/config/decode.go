package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// strictJSON decodes JSON into a typed object, refusing unknown and
// duplicate fields and matching field names case-sensitively. Its scheme is
// empty on purpose: objects are decoded as given, with no conversion or
// defaulting, and no package-level scheme is involved.
var strictJSON = jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory,
	runtime.NewScheme(), runtime.NewScheme(), jsonserializer.SerializerOptions{Strict: true})

// DecodeManifest strictly decodes one manifest: a single YAML or JSON
// document holding a v1 Pod or PodList. It neither defaults nor validates
// the pods (ParseManifest does). Every error is a *ManifestError.
func DecodeManifest(data []byte) ([]*corev1.Pod, error) {
	doc, err := singleDocument(data)
	if err != nil {
		return nil, err
	}
	jsonData, err := toJSON(doc)
	if err != nil {
		return nil, err
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(jsonData, &tm); err != nil {
		return nil, refuse(ReasonSyntax, "the document is not an object: %v", err)
	}
	if errs := checkTypeMeta(tm, nil, "Pod", "PodList"); len(errs) > 0 {
		return nil, refuseFields(ReasonKind, errs)
	}
	if tm.Kind == "PodList" {
		list := &corev1.PodList{}
		if err := decodeStrict(jsonData, list); err != nil {
			return nil, err
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
	pod := &corev1.Pod{}
	if err := decodeStrict(jsonData, pod); err != nil {
		return nil, err
	}
	pod.TypeMeta = metav1.TypeMeta{}
	return []*corev1.Pod{pod}, nil
}

// singleDocument returns the one YAML document in data. JSON is one
// document by construction. Documents holding only comments do not count.
func singleDocument(data []byte) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, refuse(ReasonEmpty, "no content")
	}
	if utilyaml.IsJSONBuffer(data) {
		return data, nil
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, refuse(ReasonSyntax, "splitting YAML documents: %v", err)
		}
		if j, err := yaml.YAMLToJSON(doc); err == nil && string(j) == "null" {
			continue // blank or comments only
		}
		docs = append(docs, doc)
	}
	switch len(docs) {
	case 0:
		return nil, refuse(ReasonEmpty, "only comments or blank YAML documents")
	case 1:
		return docs[0], nil
	}
	return nil, refuse(ReasonKind, "the file holds %d YAML documents; a manifest holds one Pod (or one PodList)", len(docs))
}

// toJSON converts a document to JSON, refusing duplicate keys.
func toJSON(doc []byte) ([]byte, error) {
	var jsonData []byte
	if utilyaml.IsJSONBuffer(doc) {
		if !json.Valid(doc) {
			var v any
			return nil, refuse(ReasonSyntax, "%v", json.Unmarshal(doc, &v))
		}
		jsonData = doc
	} else {
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, refuse(ReasonSyntax, "%s", strings.TrimPrefix(err.Error(), "error converting YAML to JSON: "))
		}
		if _, err := yaml.YAMLToJSONStrict(doc); err != nil {
			return nil, refuse(ReasonStrict, "%s", oneLine(strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")))
		}
		jsonData = j
	}
	if string(bytes.TrimSpace(jsonData)) == "null" {
		return nil, refuse(ReasonEmpty, "the document is null")
	}
	return jsonData, nil
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

// decodeStrict decodes JSON into obj, turning strict-mode complaints into
// field errors and type mismatches into syntax errors naming the field.
func decodeStrict(data []byte, obj runtime.Object) error {
	_, _, err := strictJSON.Decode(data, nil, obj)
	if err == nil {
		return nil
	}
	if se, ok := runtime.AsStrictDecodingError(err); ok {
		me := &ManifestError{Reason: ReasonStrict}
		var other []string
		for _, e := range se.Errors() {
			if m := strictFieldRE.FindStringSubmatch(e.Error()); m != nil {
				me.Fields = append(me.Fields, &field.Error{Type: field.ErrorTypeForbidden, Field: m[2], Detail: m[1] + " field"})
				continue
			}
			other = append(other, e.Error())
		}
		me.Detail = strings.Join(other, "; ")
		return me
	}
	if m := typeFieldRE.FindStringSubmatch(err.Error()); m != nil {
		return refuseFields(ReasonSyntax, field.ErrorList{field.TypeInvalid(field.NewPath(m[2]), field.OmitValueType{},
			"want "+m[3]+", got "+m[1])})
	}
	return refuse(ReasonSyntax, "%v", err)
}

// oneLine folds a multi-line parser message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
