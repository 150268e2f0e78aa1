package manifest

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The field names a manifest may use are the JSON tags of the Go types it
// decodes into. This file walks those types by reflection: to suggest the
// name a misspelt field was meant to be, and to find the field whose
// quantity does not parse (the quantity's decoder does not say which).

// maxSuggestDistance bounds how far (in edits) a misspelt name may be from
// the name suggested: further, the suggestion is more likely wrong than
// helpful.
const maxSuggestDistance = 3

var quantityType = reflect.TypeOf(resource.Quantity{})

// jsonFields returns the JSON field names of struct type t, with those of
// its inlined (embedded, untagged or ",inline") structs, each with its type.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return out
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// typeAt returns the type found at a field path (as the strict decoder
// writes it: spec.containers[0].name) from root, or nil when the path
// leaves the known types.
func typeAt(root reflect.Type, path string) reflect.Type {
	t := root
	for _, step := range splitPath(path) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if step == "[]" {
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Array && t.Kind() != reflect.Map {
				return nil
			}
			t = t.Elem()
			continue
		}
		switch t.Kind() {
		case reflect.Struct:
			ft, ok := jsonFields(t)[step]
			if !ok {
				return nil
			}
			t = ft
		case reflect.Map:
			t = t.Elem()
		default:
			return nil
		}
	}
	return t
}

// splitPath splits spec.containers[0].name into spec, containers, [],
// name: an index or map key in brackets becomes "[]".
func splitPath(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, name)
		}
		for rest != "" {
			out = append(out, "[]")
			_, rest, _ = strings.Cut(rest, "[")
		}
	}
	return out
}

// suggestField returns the known field name closest to the last element of
// an unknown field's path, or "" when none is close enough.
func suggestField(root reflect.Type, path string) string {
	parent, name := "", path
	if i := strings.LastIndex(path, "."); i >= 0 {
		parent, name = path[:i], path[i+1:]
	}
	t := root
	if parent != "" {
		if t = typeAt(root, parent); t == nil {
			return ""
		}
	}
	best, bestDist := "", maxSuggestDistance+1
	for known := range jsonFields(t) {
		d := editDistance(strings.ToLower(name), strings.ToLower(known))
		if d < bestDist || (d == bestDist && known < best) {
			best, bestDist = known, d
		}
	}
	// A short name is easily close to many: ask for half of it to match.
	if bestDist > len(name)/2 {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// badQuantities walks a decoded JSON tree beside the type it decodes into
// and returns a field error for each quantity that does not parse, naming
// its path and value.
func badQuantities(v any, t reflect.Type, p *field.Path) field.ErrorList {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == quantityType {
		s, ok := quantityText(v)
		if !ok {
			return field.ErrorList{field.Invalid(p, v, "must be a quantity, a number with an optional suffix such as 128Mi, 1G, 0.5 or 500m")}
		}
		if _, err := resource.ParseQuantity(s); err != nil {
			return field.ErrorList{field.Invalid(p, s, "must be a quantity, a number with an optional suffix such as 128Mi, 1G, 0.5 or 500m")}
		}
		return nil
	}
	var errs field.ErrorList
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		fields := jsonFields(t)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if ft, ok := fields[k]; ok {
				errs = append(errs, badQuantities(obj[k], ft, p.Child(k))...)
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			errs = append(errs, badQuantities(obj[k], t.Elem(), p.Child(k))...)
		}
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, child := range list {
			errs = append(errs, badQuantities(child, t.Elem(), p.Index(i))...)
		}
	}
	return errs
}

// quantityText is a JSON value as the quantity decoder reads it: a string,
// or a number.
func quantityText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}
