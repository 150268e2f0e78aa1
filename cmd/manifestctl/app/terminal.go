package app

import (
	"strings"
)

// escapeTerminal makes text that containers or files supplied (a
// termination message, a waiting reason, a probe's output in the
// timeline) safe to print on a terminal, as kubectl does since its
// terminal escape fix: ESC shows as ^[ and a carriage return as \r, so that
// no sequence moves the cursor, rewrites what was printed or changes the
// terminal; the other control characters but tab and newline show in caret
// notation (^G for BEL).
func escapeTerminal(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\r':
			b.WriteString(`\r`)
		case isControl(r):
			b.WriteByte('^')
			b.WriteRune(r ^ 0x40) // ESC (0x1b) -> '[', BEL (0x07) -> 'G', DEL -> '?'
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isControl: a C0 control character other than tab and newline, or DEL.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f
}
