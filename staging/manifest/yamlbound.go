package manifest

import (
	"bytes"
	"errors"
	"io"

	yamlv3 "go.yaml.in/yaml/v3"
)

// maxYAMLNodes bounds the nodes (scalars, sequences, mappings) of a YAML
// document, before it is decoded. The YAML library and the JSON written
// from its tree take 300 to 450 bytes a node, so a document of tiny values
// ("args: [a,a,a,...]": 260,000 nodes in 512 KiB) would cost about 90 MiB.
// Counted as yamlNodeBound counts, 98,304 keeps any document within about
// 21 MiB and under 100 ms (BenchmarkParseManifestAtLimit/yaml-dense), and
// is 1.4 times what a manifest at the size limit written as people write
// them counts (69,000). JSON, which costs little to decode, has no such
// bound.
const maxYAMLNodes = 96 << 10

// checkYAMLNodes refuses a document that may hold more than maxYAMLNodes
// nodes. It does not parse: it counts the characters that begin a node (a
// collection, an entry, a key and its value), which is at least the number
// of nodes whatever the quoting. Aliases (*name) are the exception, as one
// can stand for a large part of the document: when the text may hold
// anchors and aliases, its documents are parsed (without expanding
// aliases) and their nodes counted as the aliases expand them.
func checkYAMLNodes(text []byte) error {
	n, anchors, aliases := yamlNodeBound(text)
	if n > maxYAMLNodes {
		return refuse(ReasonTooLarge, "the YAML document may hold %d values, the limit is %d (JSON has no such limit)", n, maxYAMLNodes)
	}
	if !anchors || !aliases {
		return nil
	}
	dec := yamlv3.NewDecoder(bytes.NewReader(text))
	seen := map[*yamlv3.Node]int{}
	for total := 0; ; {
		var doc yamlv3.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return refuse(ReasonSyntax, "%s", oneLine(err.Error()))
		}
		if total += expanded(&doc, seen, maxYAMLNodes-total); total > maxYAMLNodes {
			return refuse(ReasonTooLarge, "excessive aliasing: the aliases (*name) make more than %d values of the document", maxYAMLNodes)
		}
	}
}

// yamlNodeBound returns at least the number of nodes of text, not counting
// what aliases stand for, and whether it may hold anchors and aliases.
func yamlNodeBound(text []byte) (n int, anchors, aliases bool) {
	n = 1
	prev := byte('\n')
	for i, c := range text {
		switch c {
		case ',', '[', '{', ':', '?':
			n += 2
		case '-': // an entry of a block sequence: "- "
			if i+1 == len(text) || isSpace(text[i+1]) {
				n += 2
			}
		case '&', '*':
			if isNodeStart(prev) {
				anchors = anchors || c == '&'
				aliases = aliases || c == '*'
			}
		}
		prev = c
	}
	return n, anchors, aliases
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// isNodeStart reports whether a node may begin after c, so that an & or *
// after it may be an anchor or alias.
func isNodeStart(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '[', '{', ',', ':', '-', '?':
		return true
	}
	return false
}

// expanded counts the nodes of n with its aliases expanded, stopping past
// budget; anchored nodes are counted once and remembered.
func expanded(n *yamlv3.Node, seen map[*yamlv3.Node]int, budget int) int {
	if n.Kind == yamlv3.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if c, ok := seen[n]; ok {
		return c
	}
	c := 1
	for _, child := range n.Content {
		if c += expanded(child, seen, budget-c); c > budget {
			return c
		}
	}
	if n.Anchor != "" {
		seen[n] = c
	}
	return c
}
