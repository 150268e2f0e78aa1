package expand

import "testing"

func TestString(t *testing.T) {
	vars := Maps(map[string]string{
		"VAR_A":     "A",
		"VAR_B":     "B",
		"VAR_C":     "C",
		"VAR_REF":   "$(VAR_A)",
		"VAR_EMPTY": "",
		"BLU":       "$$",
	}, map[string]string{
		"VAR_A":   "shadowed",
		"SERVICE": "10.0.0.1",
	})
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"no reference", "plain text", "plain text"},
		{"whole", "$(VAR_A)", "A"},
		{"inside", "___$(VAR_B)___", "___B___"},
		{"adjacent", "$(VAR_A)$(VAR_B)$(VAR_C)", "ABC"},
		{"first map wins", "$(VAR_A)", "A"},
		{"second map", "$(SERVICE):443", "10.0.0.1:443"},
		{"value not expanded again", "$(VAR_REF)", "$(VAR_A)"},
		{"defined empty", "x$(VAR_EMPTY)y", "xy"},
		{"undefined stays", "$(UNDEFINED)", "$(UNDEFINED)"},
		{"undefined among defined", "$(VAR_A)$(UNDEFINED)$(VAR_B)", "A$(UNDEFINED)B"},
		{"escaped", "$$(VAR_A)", "$(VAR_A)"},
		{"escaped twice", "$$$$(VAR_A)", "$$(VAR_A)"},
		{"escape then reference", "$$$(VAR_A)", "$A"},
		{"escaped dollar alone", "$$", "$"},
		{"value with dollars kept", "$(BLU)", "$$"},
		{"trailing dollar", "foo$", "foo$"},
		{"lone dollar", "$", "$"},
		{"dollar then letter", "$VAR_A", "$VAR_A"},
		{"dollar then space", "a $ b", "a $ b"},
		{"dollar then multibyte", "$é$(VAR_A)", "$éA"},
		{"dollar then invalid byte", "$\xffx", "$\uFFFDx"},
		{"unterminated", "$(VAR_A", "$(VAR_A"},
		{"unterminated at end", "foo$(", "foo$("},
		{"unterminated then escape", "$($$", "$($"},
		{"unterminated then reference", "$(A $(VAR_B)", "$(A $(VAR_B)"},
		{"nested parens", "$(VAR_A $(VAR_B))", "$(VAR_A $(VAR_B))"},
		{"empty name", "$()", "$()"},
		{"close before open", ")$(VAR_A)(", ")A("},
		{"spaces in name", "$( VAR_A )", "$( VAR_A )"},
		{"escaped open", "$$(", "$("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := String(tc.in, vars); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestStrings(t *testing.T) {
	if got := Strings(nil, Maps()); got != nil {
		t.Errorf("Strings(nil) = %q, want nil", got)
	}
	got := Strings([]string{"echo", "$(X)", "$$(X)"}, Maps(map[string]string{"X": "y"}))
	if want := []string{"echo", "y", "$(X)"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("Strings = %q, want %q", got, want)
	}
}
