package app

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/printers"
)

// maxTemplateFileBytes bounds a --output template file (jsonpath-file,
// custom-columns-file): a template is a line or a few.
const maxTemplateFileBytes = 64 << 10

// outputFormats are what -o takes, as kubectl get.
const outputFormats = "wide, name, json, yaml, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, custom-columns=SPEC or custom-columns-file=FILE"

// outputFlags are get's -o and --no-headers.
type outputFlags struct {
	output    string
	noHeaders bool
}

func (o *outputFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: "+outputFormats)
	cmd.Flags().BoolVar(&o.noHeaders, "no-headers", false, "print the tables (the default, wide and custom-columns) without their header lines")
	_ = cmd.RegisterFlagCompletionFunc("output", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, f := range []string{"wide", "name", "json", "yaml", "jsonpath=", "jsonpath-file=", "jsonpath-as-json=", "custom-columns=", "custom-columns-file="} {
			if strings.HasPrefix(f, toComplete) {
				out = append(out, f)
			}
		}
		return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	})
}

// table reports whether the output is manifestctl's own table (the
// default, or wide).
func (o *outputFlags) table() bool { return o.output == "" || o.output == "wide" }

// printer returns the cli-runtime printer of the output format, or nil for
// the tables; a format it does not know is bad usage.
func (o *outputFlags) printer() (printers.ResourcePrinter, error) {
	format, arg, hasArg := strings.Cut(o.output, "=")
	needArg := func() error {
		if !hasArg || arg == "" {
			return usageError{fmt.Errorf("--output %s needs a value after '=', as -o %s=...", format, format)}
		}
		return nil
	}
	switch format {
	case "", "wide":
		if hasArg {
			break
		}
		return nil, nil
	case "json":
		if !hasArg {
			return &printers.JSONPrinter{}, nil
		}
	case "yaml":
		if !hasArg {
			return &printers.YAMLPrinter{}, nil
		}
	case "name":
		if !hasArg {
			return &printers.NamePrinter{}, nil
		}
	case "jsonpath", "jsonpath-as-json":
		if err := needArg(); err != nil {
			return nil, err
		}
		return jsonPathPrinter(format, arg, "")
	case "jsonpath-file":
		if err := needArg(); err != nil {
			return nil, err
		}
		tmpl, err := readTemplateFile(arg)
		if err != nil {
			return nil, err
		}
		return jsonPathPrinter(format, tmpl, arg)
	case "custom-columns":
		if err := needArg(); err != nil {
			return nil, err
		}
		return newCustomColumns(arg, !o.noHeaders)
	case "custom-columns-file":
		if err := needArg(); err != nil {
			return nil, err
		}
		spec, err := readTemplateFile(arg)
		if err != nil {
			return nil, err
		}
		return customColumnsFromFile(spec, arg, !o.noHeaders)
	}
	return nil, usageError{fmt.Errorf("--output %q: want %s", o.output, outputFormats)}
}

func jsonPathPrinter(format, tmpl, file string) (printers.ResourcePrinter, error) {
	p, err := printers.NewJSONPathPrinter(tmpl)
	if err != nil {
		if file != "" {
			return nil, usageError{fmt.Errorf("--output %s=%s: %v", format, file, err)}
		}
		return nil, usageError{fmt.Errorf("--output %s: template %q: %v", format, tmpl, err)}
	}
	// As kubectl: a missing key prints nothing rather than failing.
	p.AllowMissingKeys(true)
	if format == "jsonpath-as-json" {
		p.EnableJSONOutput(true)
	}
	return p, nil
}

// readTemplateFile reads a template file of at most maxTemplateFileBytes.
func readTemplateFile(path string) (string, error) {
	b, err := readRegularFile(path, maxTemplateFileBytes, "a template file")
	if err != nil {
		return "", usageError{fmt.Errorf("--output template file: %w", err)}
	}
	return strings.TrimSpace(string(b)), nil
}
