package hasheduri_test

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/urlhash/urlhash/hashkey/hasheduri"
)

// FuzzParse checks that Parse never panics, that what it accepts is valid
// and round-trips through String, and that it ignores ASCII case.
func FuzzParse(f *testing.F) {
	var pc parseCases
	readJSON(f, "testdata/parse.json", &pc)
	for _, tc := range pc.Valid {
		f.Add(tc.Input)
	}
	for _, tc := range pc.Invalid {
		f.Add(tc.Input)
	}
	var dv draftVectors
	readJSON(f, "testdata/hashed_uri.json", &dv)
	for _, tc := range dv.Hashed {
		f.Add(tc.Want)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := hasheduri.Parse(s)
		upper, uerr := hasheduri.Parse(asciiUpper(s))
		if (err == nil) != (uerr == nil) {
			t.Fatalf("Parse(%q): %v but Parse(%q): %v", s, err, asciiUpper(s), uerr)
		}
		if err != nil {
			var pe *hasheduri.ParseError
			if !errors.As(err, &pe) || pe.Input != s {
				t.Fatalf("Parse(%q): error %#v is not a *ParseError naming the input", s, err)
			}
			return
		}
		if !u.IsValid() {
			t.Fatalf("Parse(%q) = %+v is not valid", s, u)
		}
		if !upper.Equal(u) {
			t.Fatalf("Parse(%q) = %+v, but in upper case %+v", s, u, upper)
		}
		str := u.String()
		back, err := hasheduri.Parse(str)
		if err != nil {
			t.Fatalf("Parse(%q) = %+v, whose String %q does not parse: %v", s, u, str, err)
		}
		if !back.Equal(u) || back.String() != str {
			t.Fatalf("Parse(%q) = %+v, String %q, parses back as %+v", s, u, str, back)
		}
		if len(str) != len(s) && u.Alg != hasheduri.SHA256 {
			t.Fatalf("Parse(%q).String() = %q: different length", s, str)
		}
	})
}

// FuzzGenerateMatch checks, for any URL the canonicaliser accepts, that
// canonicalisation is idempotent, that P is coarser than N, that Generate
// hashes exactly the canonical form, and that Generate, then Parse of
// String, then Match of the same URL and of its canonical form is true.
func FuzzGenerateMatch(f *testing.F) {
	var dv draftVectors
	readJSON(f, "testdata/hashed_uri.json", &dv)
	for i, tc := range dv.Hashed {
		f.Add(tc.Input, uint8(i), uint8(i), uint8(i))
	}
	for i, tc := range dv.Variants {
		f.Add(tc.Input, uint8(i), uint8(3), uint8(i))
	}
	var cc canonicalCases
	readJSON(f, "testdata/canonical.json", &cc)
	for i, tc := range cc.Canonical {
		f.Add(tc.Input, uint8(i), uint8(i>>1), uint8(i>>3))
	}
	for i, tc := range cc.Errors {
		f.Add(tc.Input, uint8(i), uint8(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, raw string, a, k, vb uint8) {
		alg := hasheduri.Alg(a%3 + 1)
		keep := hasheduri.Keep(k % 4)
		v := hasheduri.Variant(vb % 2)

		canon, err := hasheduri.CanonicalKeep(raw, keep, v)
		u, gerr := hasheduri.Generate(raw, alg, keep, v)
		if err != nil {
			var ue *hasheduri.URLError
			if !errors.As(err, &ue) || ue.Input != raw {
				t.Fatalf("CanonicalKeep(%q): error %#v is not a *URLError naming the input", raw, err)
			}
			if gerr == nil || gerr.Error() != err.Error() {
				t.Fatalf("CanonicalKeep(%q): %v, but Generate: %v", raw, err, gerr)
			}
			return
		}
		if gerr != nil {
			t.Fatalf("CanonicalKeep(%q) = %q, but Generate: %v", raw, canon, gerr)
		}

		// Idempotence, with the same keep and keeping both.
		for _, kk := range []hasheduri.Keep{keep, hasheduri.KeepBoth} {
			again, err := hasheduri.CanonicalKeep(canon, kk, v)
			if err != nil || again != canon {
				t.Fatalf("CanonicalKeep(%q, %v, %v) = %q; CanonicalKeep(that, %v) = %q, %v", raw, keep, v, canon, kk, again, err)
			}
		}
		// P is coarser than N: canonicalising N's result with P gives P's.
		if v == hasheduri.N {
			p1, err1 := hasheduri.CanonicalKeep(raw, keep, hasheduri.P)
			p2, err2 := hasheduri.CanonicalKeep(canon, keep, hasheduri.P)
			if err1 != nil || err2 != nil || p1 != p2 {
				t.Fatalf("P(%q) = %q, %v; P(N(...) = %q) = %q, %v", raw, p1, err1, canon, p2, err2)
			}
		}

		// Generate hashes the canonical form.
		if want := digest(alg, canon); string(u.Digest) != string(want) {
			t.Fatalf("Generate(%q, %v) digest %x, want %x (of %q)", raw, alg, u.Digest, want, canon)
		}
		if u.Keep() != keep || u.Alg != alg {
			t.Fatalf("Generate(%q, %v, %v) = %+v", raw, alg, keep, u)
		}

		parsed, err := hasheduri.Parse(u.String())
		if err != nil || !parsed.Equal(u) {
			t.Fatalf("Parse(%q) = %+v, %v; want %+v", u.String(), parsed, err, u)
		}
		for _, in := range []string{raw, canon} {
			ok, err := parsed.Match(in, v)
			if err != nil || !ok {
				t.Fatalf("%s (from %q).Match(%q, %v) = %v, %v; want true", parsed, raw, in, v, ok, err)
			}
		}
	})
}

// digest hashes s with alg, independently of the package.
func digest(alg hasheduri.Alg, s string) []byte {
	switch alg {
	case hasheduri.MD5:
		d := md5.Sum([]byte(s))
		return d[:]
	case hasheduri.SHA1:
		d := sha1.Sum([]byte(s))
		return d[:]
	}
	d := sha256.Sum256([]byte(s))
	return d[:]
}

// asciiUpper upper-cases ASCII letters only, so that no other byte changes.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
