package corpus

import (
	"slices"
	"testing"
)

func TestDeriveReproducible(t *testing.T) {
	base := []string{"https://example.com/", "http://example.org/a", "ftp://ftp.example.net/pub/"}
	a := Derive(base, 500, Seed)
	b := Derive(base, 500, Seed)
	if !slices.Equal(a, b) {
		t.Fatal("Derive is not reproducible for one seed")
	}
	if len(a) != 500 || !slices.Equal(a[:3], base) {
		t.Fatalf("Derive returned %d URLs starting %q", len(a), a[:3])
	}
	if c := Derive(base, 500, Seed+1); slices.Equal(a, c) {
		t.Fatal("different seeds gave the same URLs")
	}
	if got := len(Derive(base, 2, Seed)); got != 2 {
		t.Fatalf("Derive(n=2) returned %d URLs", got)
	}
}
