package expand

import (
	"strings"
	"unicode/utf8"
)

// Lookup returns the value of a variable and whether it is defined.
type Lookup func(name string) (string, bool)

// Maps looks a name up in each map in turn; the first that defines it
// wins.
func Maps(maps ...map[string]string) Lookup {
	return func(name string) (string, bool) {
		for _, m := range maps {
			if v, ok := m[name]; ok {
				return v, true
			}
		}
		return "", false
	}
}

// String expands the references in s. A string without a '$' is returned
// as is, without copying.
func String(s string, lookup Lookup) string {
	i := strings.IndexByte(s, '$')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:] // s[0] == '$'
		switch {
		case len(s) == 1:
			// A trailing '$' stays.
			b.WriteByte('$')
			s = ""
		case s[1] == '$':
			b.WriteByte('$')
			s = s[2:]
		case s[1] == '(':
			end := strings.IndexByte(s[2:], ')')
			if end < 0 {
				// Never closed: "$(" stays, and what follows is read
				// again, so a later "$$" still escapes.
				b.WriteString("$(")
				s = s[2:]
				break
			}
			name := s[2 : 2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[:end+3])
			}
			s = s[end+3:]
		default:
			// '$' and the character after it stay (a byte that is not
			// UTF-8 becomes U+FFFD, as in the kubelet).
			r, size := utf8.DecodeRuneInString(s[1:])
			b.WriteByte('$')
			b.WriteRune(r)
			s = s[1+size:]
		}
		i = strings.IndexByte(s, '$')
	}
	b.WriteString(s)
	return b.String()
}

// Strings expands each of ss; nil stays nil.
func Strings(ss []string, lookup Lookup) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = String(s, lookup)
	}
	return out
}
