package manifest

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func TestDecodeManifestRefusesMoreThanMaxManifestBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{{"yaml", largePodList(MaxManifestBytes)}, {"json", largePodListJSON(t, MaxManifestBytes)}} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.data) < MaxManifestBytes-16<<10 {
				t.Fatalf("the manifest at the limit is only %d bytes", len(tc.data))
			}
			if _, err := DecodeManifest(tc.data); err != nil {
				t.Fatalf("a legal manifest of %d bytes: %v", len(tc.data), err)
			}
			over := append(append([]byte{}, tc.data...), strings.Repeat(" ", MaxManifestBytes+1-len(tc.data))...)
			_, err := ParseManifest(over, ParseOptions{NodeName: testNode, Source: podtypes.FileSource, Origin: "/m/big"})
			want := fmt.Sprintf("/m/big: manifest is too large: %d bytes, the limit is %d (MaxManifestBytes)", MaxManifestBytes+1, MaxManifestBytes)
			if !errors.Is(err, ErrTooLarge) || err.Error() != want {
				t.Errorf("ParseManifest(%d bytes) = %v, want %q", len(over), err, want)
			}
		})
	}
}

// TestParseManifestAtTheLimitAllocatesLittle holds decoding to its budget:
// a legal manifest at the limit, parsed once, allocates less than 30 MiB in
// all (the heap it needs at any one time is less still).
func TestParseManifestAtTheLimitAllocatesLittle(t *testing.T) {
	data := largePodList(MaxManifestBytes)
	opts := ParseOptions{NodeName: testNode, Source: podtypes.FileSource, Origin: "/m/large.yaml"}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	pods, err := ParseManifest(data, opts)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	const budget = 30 << 20
	if n := after.TotalAlloc - before.TotalAlloc; n > budget {
		t.Errorf("parsing %d bytes (%d pods) allocated %d MiB, the budget is %d MiB", len(data), len(pods), n>>20, budget>>20)
	}
}

// podWithLists is a valid manifest whose pod has n of the list at the
// given field path: spec.containers, spec.initContainers, spec.volumes,
// spec.tolerations, spec.hostAliases, spec.dnsConfig.searches, or env,
// ports or volumeMounts of its one container.
func podWithLists(field string, n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata: {name: lists}\nspec:\n")
	items := func(key string, item func(i int) string) {
		fmt.Fprintf(&b, "  %s:\n", key)
		for i := range n {
			fmt.Fprintf(&b, "  - %s\n", item(i))
		}
	}
	container := "  - name: main\n    image: i:1\n"
	switch field {
	case "spec.containers":
		items("containers", func(i int) string { return fmt.Sprintf("{name: c%d, image: i:1}", i) })
		return b.String()
	case "spec.initContainers":
		items("initContainers", func(i int) string { return fmt.Sprintf("{name: init%d, image: i:1}", i) })
	case "spec.volumes":
		items("volumes", func(i int) string { return fmt.Sprintf("{name: v%d, emptyDir: {}}", i) })
	case "spec.tolerations":
		items("tolerations", func(i int) string { return fmt.Sprintf("{key: k%d, operator: Exists}", i) })
	case "spec.hostAliases":
		items("hostAliases", func(i int) string { return fmt.Sprintf("{ip: 10.0.%d.%d, hostnames: [h%d]}", i/256, i%256, i) })
	case "spec.dnsConfig.searches":
		b.WriteString("  dnsConfig:\n")
		fmt.Fprintf(&b, "    searches: [")
		for i := range n {
			fmt.Fprintf(&b, "s%d.example, ", i)
		}
		b.WriteString("]\n")
	case "spec.containers[0].env":
		container += "    env:\n"
		for i := range n {
			container += fmt.Sprintf("    - {name: E%d, value: v}\n", i)
		}
	case "spec.containers[0].ports":
		container += "    ports:\n"
		for i := range n {
			container += fmt.Sprintf("    - {containerPort: %d}\n", 1000+i)
		}
	case "spec.containers[0].volumeMounts":
		b.WriteString("  volumes: [{name: v, emptyDir: {}}]\n")
		container += "    volumeMounts:\n"
		for i := range n {
			container += fmt.Sprintf("    - {name: v, mountPath: /m/%d}\n", i)
		}
	default:
		panic("no list " + field)
	}
	b.WriteString("  containers:\n" + container)
	return b.String()
}

func TestParseManifestBoundsListLengths(t *testing.T) {
	opts := ParseOptions{NodeName: testNode, Source: podtypes.FileSource, Origin: "/m/lists.yaml"}
	for _, tc := range []struct {
		field string
		limit int
	}{
		{"spec.containers", 64},
		{"spec.initContainers", 64},
		{"spec.volumes", 256},
		{"spec.tolerations", 256},
		{"spec.hostAliases", 256},
		{"spec.dnsConfig.searches", 32},
		{"spec.containers[0].env", 1024},
		{"spec.containers[0].ports", 256},
		{"spec.containers[0].volumeMounts", 256},
	} {
		t.Run(tc.field, func(t *testing.T) {
			if _, err := ParseManifest([]byte(podWithLists(tc.field, tc.limit)), opts); err != nil {
				t.Fatalf("%d items, the limit: %v", tc.limit, err)
			}
			_, err := ParseManifest([]byte(podWithLists(tc.field, tc.limit+1)), opts)
			var me *ManifestError
			if !errors.As(err, &me) || !errors.Is(err, ErrTooLarge) || me.Field() != tc.field || me.Origin != opts.Origin ||
				!strings.Contains(err.Error(), fmt.Sprintf("must have at most %d items", tc.limit)) {
				t.Errorf("%d items: %v; want a refusal naming %s and its limit %d", tc.limit+1, err, tc.field, tc.limit)
			}
		})
	}
}

func TestDecodeManifestBoundsPodListItems(t *testing.T) {
	list := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"apiVersion":"v1","kind":"PodList","items":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"metadata":{"name":"p%d"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, i)
		}
		b.WriteString("]}")
		return []byte(b.String())
	}
	if pods, err := DecodeManifest(list(256)); err != nil || len(pods) != 256 {
		t.Fatalf("256 items: %d pods, %v", len(pods), err)
	}
	_, err := DecodeManifest(list(257))
	var me *ManifestError
	if !errors.As(err, &me) || !errors.Is(err, ErrTooLarge) || me.Field() != "items" || !strings.Contains(err.Error(), "must have at most 256 items") {
		t.Errorf("257 items: %v; want a refusal naming items and the limit 256", err)
	}
}

func TestARefusalListsAtMostTwentyFields(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: main\n    image: i:1\n    env:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "    - {name: '%d bad', value: v}\n", i)
	}
	_, err := ParseManifest([]byte(b.String()), ParseOptions{NodeName: testNode, Source: podtypes.FileSource, Origin: "/m/web.yaml"})
	var me *ManifestError
	if !errors.As(err, &me) || len(me.Fields) != 20 || me.Field() != "spec.containers[0].env[0].name" || !strings.HasSuffix(err.Error(), "; and 980 more") {
		t.Errorf("ParseManifest = %v; want the first 20 of 1000 bad fields and a count of the others", err)
	}
	// The YAML library's list of duplicate keys is cut the same way.
	dup := "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: {" + strings.Repeat("k: v, ", 101) + "}\n"
	_, err = DecodeManifest([]byte(dup))
	if !errors.Is(err, ErrStrict) || strings.Count(err.Error(), "already set in map") != 20 || !strings.HasSuffix(err.Error(), "; and 80 more") {
		t.Errorf("DecodeManifest = %v; want the first 20 of 100 duplicate keys and a count of the others", err)
	}
}

// TestYAMLOfManyTinyValuesIsBounded: "args: [a,a,a,...]" makes a node of
// every two bytes, each costing the YAML library some 300 bytes.
func TestYAMLOfManyTinyValuesIsBounded(t *testing.T) {
	head := "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: c\n    image: i\n    args: ["
	dense := head + strings.Repeat("a,", (MaxManifestBytes-len(head)-10)/2) + "]\n"
	_, err := DecodeManifest([]byte(dense))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "values, the limit is 98304 (JSON has no such limit)") {
		t.Errorf("a flow list of %d bytes: %v, want a refusal naming the limit", len(dense), err)
	}
	// The same list in JSON is cheap to decode, and allowed.
	jhead := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i","args":["a"`
	asJSON := jhead + strings.Repeat(`,"a"`, (MaxManifestBytes-len(jhead)-10)/4) + "]}]}}"
	if _, err := DecodeManifest([]byte(asJSON)); err != nil {
		t.Errorf("the list as JSON (%d bytes): %v", len(asJSON), err)
	}
	// Block style takes 8 bytes a value: 65,000 values in 512 KiB, allowed.
	block := denseYAML(MaxManifestBytes)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = DecodeManifest([]byte(block))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("a block list of %d bytes: %v", len(block), err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 30<<20 {
		t.Errorf("decoding a block list of %d bytes allocated %d MiB, the budget is 30 MiB", len(block), n>>20)
	}
}

func TestYAMLAliasesAreBoundedByWhatTheyExpandTo(t *testing.T) {
	shared := "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: c\n    image: i\n    command: [sh, -c, 'ls * && true']\n    env: &env [{name: A, value: a}, {name: B, value: b}]\n  - name: d\n    image: i\n    env: *env\n"
	pods, err := DecodeManifest([]byte(shared))
	if err != nil || len(pods[0].Spec.Containers[1].Env) != 2 {
		t.Fatalf("an alias shared by two containers: %v", err)
	}
	// Few nodes, each alias standing for 2,001: 80 of them make 160,000, more than 98,304.
	var labels strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&labels, "k%d: v, ", i)
	}
	bomb := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels: &l {" + labels.String() + "}\nspec:\n  x: [" + strings.Repeat("*l, ", 80) + "]\n"
	_, err = DecodeManifest([]byte(bomb))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "the aliases (*name) make more than 98304 values") {
		t.Errorf("80 aliases of a 2,000-node mapping: %v, want a refusal for aliasing", err)
	}
	// The same in a second document, which the manifest may not have but the
	// YAML library would read before counting documents.
	_, err = DecodeManifest([]byte(shared + "---\n" + bomb))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "the aliases (*name) make more than 98304 values") {
		t.Errorf("the aliases in a second document: %v, want a refusal for aliasing", err)
	}
}

// TestYAMLAliasesOfALongStringAreBounded: few values, but each alias
// repeats 100 KiB; the JSON they make is bounded.
func TestYAMLAliasesOfALongStringAreBounded(t *testing.T) {
	text := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  annotations: {a: &a \"" + strings.Repeat("x", 100<<10) +
		"\"}\nspec:\n  x: [" + strings.Repeat("*a, ", 30) + "]\n"
	_, err := DecodeManifest([]byte(text))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "makes more than 2097152 bytes of JSON") {
		t.Errorf("30 aliases of a 100 KiB string: %v, want a refusal for the JSON they make", err)
	}
}
