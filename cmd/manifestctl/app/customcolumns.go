package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"
)

// customColumns prints -o custom-columns: a table with a column per
// HEADER:JSONPATH of the spec and a row per object (per item of a list),
// as kubectl get. A path that finds nothing prints <none>.
type customColumns struct {
	headers []string
	paths   []*jsonpath.JSONPath
	header  bool
}

// newCustomColumns parses -o custom-columns=HEADER:PATH[,HEADER:PATH...].
func newCustomColumns(spec string, header bool) (*customColumns, error) {
	c := &customColumns{header: header}
	for _, col := range strings.Split(spec, ",") {
		h, path, ok := strings.Cut(col, ":")
		if !ok || h == "" || path == "" {
			return nil, usageError{fmt.Errorf("--output custom-columns: column %q: want HEADER:JSONPATH, as NAME:.metadata.name", col)}
		}
		if err := c.add(h, path); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// customColumnsFromFile parses a custom-columns file: a line of headers
// and a line of paths, separated by spaces, as kubectl's.
func customColumnsFromFile(text, file string, header bool) (*customColumns, error) {
	lines := strings.Split(text, "\n")
	if len(lines) != 2 {
		return nil, usageError{fmt.Errorf("--output custom-columns-file=%s: want two lines, the headers and the paths, not %d", file, len(lines))}
	}
	hs, ps := strings.Fields(lines[0]), strings.Fields(lines[1])
	if len(hs) != len(ps) || len(hs) == 0 {
		return nil, usageError{fmt.Errorf("--output custom-columns-file=%s: %d headers for %d paths", file, len(hs), len(ps))}
	}
	c := &customColumns{header: header}
	for i := range hs {
		if err := c.add(hs[i], ps[i]); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *customColumns) add(header, path string) error {
	expr := path
	if !strings.HasPrefix(expr, "{") {
		// kubectl's relaxed form: metadata.name and .metadata.name.
		expr = "{." + strings.TrimPrefix(expr, ".") + "}"
	}
	j := jsonpath.New(header).AllowMissingKeys(true)
	if err := j.Parse(expr); err != nil {
		return usageError{fmt.Errorf("--output custom-columns: column %s: path %q: %v", header, path, err)}
	}
	c.headers = append(c.headers, header)
	c.paths = append(c.paths, j)
	return nil
}

// PrintObj prints obj, or each item of a list, as a row.
func (c *customColumns) PrintObj(obj runtime.Object, w io.Writer) error {
	objs := []runtime.Object{obj}
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return err
		}
		objs = items
	}
	tw := tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)
	if c.header {
		fmt.Fprintln(tw, strings.Join(c.headers, "\t"))
	}
	for _, o := range objs {
		data, err := json.Marshal(o)
		if err != nil {
			return err
		}
		var tree any
		if err := json.Unmarshal(data, &tree); err != nil {
			return err
		}
		cells := make([]string, len(c.paths))
		for i, j := range c.paths {
			cells[i], err = cell(j, tree)
			if err != nil {
				return fmt.Errorf("column %s: %w", c.headers[i], err)
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// cell is what a column's path finds in an object, its values joined by
// commas, or <none>; text from containers is escaped for the terminal.
func cell(j *jsonpath.JSONPath, tree any) (string, error) {
	results, err := j.FindResults(tree)
	if err != nil {
		return "", err
	}
	var vals []string
	for _, rs := range results {
		for _, r := range rs {
			if !r.IsValid() || (r.Kind() == reflect.Interface && r.IsNil()) {
				continue
			}
			var b bytes.Buffer
			if err := j.PrintResults(&b, []reflect.Value{r}); err != nil {
				return "", err
			}
			vals = append(vals, escapeTerminal(b.String()))
		}
	}
	if len(vals) == 0 {
		return "<none>", nil
	}
	return strings.Join(vals, ","), nil
}
