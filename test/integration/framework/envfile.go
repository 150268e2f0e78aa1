package framework

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// readEnvFile parses the KEY=VALUE lines a hack/*-up.sh script writes.
// Values may be single- or double-quoted; blank lines and comments are
// skipped.
func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE, got %q", path, n, line)
		}
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		}
		vars[key] = value
	}
	return vars, sc.Err()
}

// need returns the named variables, or an error listing the missing ones.
func need(path string, vars map[string]string, keys ...string) error {
	var missing []string
	for _, k := range keys {
		if vars[k] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s", path, strings.Join(missing, ", "))
	}
	return nil
}
