package manifest

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// utf8Text returns a manifest as UTF-8 without a byte-order mark. Editors on
// Windows save "Unicode" text as UTF-16 with a byte-order mark: that is
// transcoded. What cannot be read as text is refused, saying which encoding
// it seems to be in or at which byte it stops being UTF-8, since a YAML or
// JSON parser would only report a puzzling syntax error.
func utf8Text(data []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		if looksLikeUTF16(data[3:]) {
			return nil, refuse(ReasonEncoding, "the manifest is UTF-16 (every other byte is zero) behind a UTF-8 byte-order mark; a manifest must be UTF-8: save it as UTF-8")
		}
		return validUTF8(data[3:], 3)
	case bytes.HasPrefix(data, []byte{0x00, 0x00, 0xFE, 0xFF}), bytes.HasPrefix(data, []byte{0xFF, 0xFE, 0x00, 0x00}):
		return nil, refuse(ReasonEncoding, "the byte-order mark says UTF-32; save the manifest as UTF-8")
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return fromUTF16(data[2:], false)
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return fromUTF16(data[2:], true)
	case looksLikeUTF16(data):
		return nil, refuse(ReasonEncoding, "the manifest is UTF-16 without a byte-order mark (every other byte is zero), not UTF-8; a manifest must be UTF-8 (or UTF-16 with a byte-order mark): save it as UTF-8")
	}
	return validUTF8(data, 0)
}

// utf16Sample is how much of a manifest looksLikeUTF16 looks at.
const utf16Sample = 512

// looksLikeUTF16 reports whether data reads as UTF-16 text: in its first
// bytes, at least a third of the bytes at one parity (even or odd offsets)
// are zero and none at the other. ASCII text in UTF-16 has a zero in every
// other byte; no YAML or JSON text in UTF-8 has zeros at all.
func looksLikeUTF16(data []byte) bool {
	data = data[:min(len(data), utf16Sample)]
	if len(data) < 4 {
		return false
	}
	var zeros [2]int
	for i, b := range data {
		if b == 0 {
			zeros[i%2]++
		}
	}
	half := len(data) / 2
	return (zeros[0] == 0 && zeros[1]*3 >= half) || (zeros[1] == 0 && zeros[0]*3 >= half)
}

// validUTF8 returns text if it is UTF-8, or an error with the offset of the
// first byte that is not; base is where text starts in the manifest.
func validUTF8(text []byte, base int) ([]byte, error) {
	if utf8.Valid(text) {
		return text, nil
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && n <= 1 {
			line := 1 + bytes.Count(text[:i], []byte{'\n'})
			return nil, refuse(ReasonEncoding, "invalid UTF-8 at byte offset %d (line %d, byte 0x%02X); a manifest must be UTF-8", base+i, line, text[i])
		}
		i += n
	}
	return text, nil // not reached: utf8.Valid said otherwise
}

// fromUTF16 transcodes UTF-16 text (after its byte-order mark) to UTF-8.
func fromUTF16(data []byte, bigEndian bool) ([]byte, error) {
	name := "UTF-16LE"
	unit := func(i int) rune { return rune(data[i]) | rune(data[i+1])<<8 }
	if bigEndian {
		name = "UTF-16BE"
		unit = func(i int) rune { return rune(data[i])<<8 | rune(data[i+1]) }
	}
	if len(data)%2 != 0 {
		return nil, refuse(ReasonEncoding, "%s (from its byte-order mark) with an odd number of bytes; save the manifest as UTF-8", name)
	}
	out := make([]byte, 0, len(data)/2)
	for i := 0; i < len(data); i += 2 {
		r := unit(i)
		if utf16.IsSurrogate(r) {
			var r2 rune = utf8.RuneError
			if i+3 < len(data) {
				r2 = utf16.DecodeRune(r, unit(i+2))
			}
			if r2 == utf8.RuneError {
				return nil, refuse(ReasonEncoding, "%s (from its byte-order mark) with an unpaired surrogate at byte offset %d; save the manifest as UTF-8", name, 2+i)
			}
			r = r2
			i += 2
		}
		out = utf8.AppendRune(out, r)
	}
	return out, nil
}
