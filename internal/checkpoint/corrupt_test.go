package checkpoint

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

var damageRounds = flag.Int("damage-rounds", 150, "damaged files TestBoltSurvivesRandomDamage tries (2000 were tried when it was written)")

// TestBoltSurvivesRandomDamage damages a valid checkpoint at random places,
// many times over. Whatever the damage, Open and List must not panic:
// either the file still opens (records it cannot decode are reported) or it
// is moved aside and a fresh store works.
func TestBoltSurvivesRandomDamage(t *testing.T) {
	src := filepath.Join(t.TempDir(), "valid.db")
	s := openAt(t, src, Options{})
	for i := range 20 {
		if err := put(s, record(fmt.Sprintf("pod-%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	valid, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}

	rng := rand.New(rand.NewPCG(1, 2)) // fixed seed: failures reproduce
	var opened, movedAside int
	for round := range *damageRounds {
		bad := append([]byte(nil), valid...)
		for range 1 + rng.IntN(8) {
			at := rng.IntN(len(bad))
			n := min(1+rng.IntN(64), len(bad)-at)
			for i := range n {
				bad[at+i] = byte(rng.UintN(256))
			}
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "checkpoint.db")
		if err := os.WriteFile(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("round %d: panic: %v", round, r)
				}
			}()
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatalf("round %d: Open: %v", round, err)
			}
			defer s.Close()
			if _, err := s.List(); err != nil && !errors.Is(err, ErrCorruptRecord) {
				t.Fatalf("round %d: List: %v", round, err)
			}
			if err := put(s, record("after")); err != nil {
				t.Fatalf("round %d: put after damage: %v", round, err)
			}
		}()
		if aside, _ := filepath.Glob(path + ".corrupt-*"); len(aside) > 0 {
			movedAside++
		} else {
			opened++
		}
	}
	t.Logf("%d damaged files: %d opened as they were, %d moved aside", *damageRounds, opened, movedAside)
}
