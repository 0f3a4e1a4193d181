package hasheduri_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey/hasheduri"
)

// draftVectors is testdata/hashed_uri.json: the draft's §4.4 examples and
// both Appendix A examples.
type draftVectors struct {
	Hashed []struct {
		Input string `json:"input"`
		Alg   string `json:"alg"`
		Keep  string `json:"keep"`
		Want  string `json:"want"`
	} `json:"hashed"`
	Variants []struct {
		Input string `json:"input"`
		N     string `json:"N"`
		P     string `json:"P"`
	} `json:"canonical_variants"`
}

// canonicalCases is testdata/canonical.json: this package's decisions.
type canonicalCases struct {
	Canonical []struct {
		Rule  string `json:"rule"`
		Input string `json:"input"`
		N     string `json:"n"`
		P     string `json:"p"`
	} `json:"canonical"`
	Keep []struct {
		Input string `json:"input"`
		Keep  string `json:"keep"`
		N     string `json:"n"`
	} `json:"keep"`
	Errors []struct {
		Input string `json:"input"`
		Err   string `json:"err"`
	} `json:"errors"`
}

// parseCases is testdata/parse.json.
type parseCases struct {
	Valid []struct {
		Input  string `json:"input"`
		Alg    string `json:"alg"`
		Hex    string `json:"hex"`
		Frag   bool   `json:"frag"`
		Query  bool   `json:"query"`
		String string `json:"string"`
	} `json:"valid"`
	Invalid []struct {
		Input string `json:"input"`
		Err   string `json:"err"`
	} `json:"invalid"`
}

// sentinels maps the error names used in testdata to the errors.
var sentinels = map[string]error{
	"ErrSyntax":           hasheduri.ErrSyntax,
	"ErrUnknownAlgorithm": hasheduri.ErrUnknownAlgorithm,
	"ErrHex":              hasheduri.ErrHex,
	"ErrDigestLength":     hasheduri.ErrDigestLength,
	"ErrUnknownFlag":      hasheduri.ErrUnknownFlag,
	"ErrDuplicateFlag":    hasheduri.ErrDuplicateFlag,
	"ErrRelative":         hasheduri.ErrRelative,
	"ErrScheme":           hasheduri.ErrScheme,
	"ErrHost":             hasheduri.ErrHost,
	"ErrPort":             hasheduri.ErrPort,
}

func readJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}

func sentinel(tb testing.TB, name string) error {
	tb.Helper()
	err, ok := sentinels[name]
	if !ok {
		tb.Fatalf("testdata names unknown error %q", name)
	}
	return err
}

func parseKeep(tb testing.TB, s string) hasheduri.Keep {
	tb.Helper()
	if s == "" {
		return hasheduri.KeepNone
	}
	k, err := hasheduri.ParseKeep(s)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

func TestDraftHashed(t *testing.T) {
	var vs draftVectors
	readJSON(t, "testdata/hashed_uri.json", &vs)
	if len(vs.Hashed) != 7 {
		t.Fatalf("hashed_uri.json has %d hashed cases, want 7", len(vs.Hashed))
	}
	for _, tc := range vs.Hashed {
		t.Run(tc.Input+"/"+tc.Alg+"/"+tc.Keep, func(t *testing.T) {
			alg, err := hasheduri.ParseAlg(tc.Alg)
			if err != nil {
				t.Fatal(err)
			}
			keep := parseKeep(t, tc.Keep)
			got, err := hasheduri.Generate(tc.Input, alg, keep, hasheduri.N)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tc.Want {
				t.Errorf("Generate(%q, %v, %v, N) = %s, want %s", tc.Input, alg, keep, got, tc.Want)
			}
			u, err := hasheduri.Parse(tc.Want)
			if err != nil {
				t.Fatal(err)
			}
			if !u.Equal(got) {
				t.Errorf("Parse(%q) = %+v, want %+v", tc.Want, u, got)
			}
			ok, err := u.Match(tc.Input, hasheduri.N)
			if err != nil || !ok {
				t.Errorf("Parse(%q).Match(%q, N) = %v, %v, want true", tc.Want, tc.Input, ok, err)
			}
			// The draft's digest also matches the same URL with a
			// different fragment when +frag is absent, and never when
			// it is present.
			ok, err = u.Match(tc.Input+"#other", hasheduri.N)
			if err != nil {
				t.Fatal(err)
			}
			if want := !u.Frag; ok != want {
				t.Errorf("Match(%q) = %v, want %v", tc.Input+"#other", ok, want)
			}
		})
	}
}

func TestDraftVariants(t *testing.T) {
	var vs draftVectors
	readJSON(t, "testdata/hashed_uri.json", &vs)
	if len(vs.Variants) != 2 {
		t.Fatalf("hashed_uri.json has %d variant cases, want 2", len(vs.Variants))
	}
	for _, tc := range vs.Variants {
		t.Run(tc.Input, func(t *testing.T) {
			checkCanonical(t, tc.Input, tc.N, tc.P)
		})
	}
}

func TestCanonicalDecisions(t *testing.T) {
	var cs canonicalCases
	readJSON(t, "testdata/canonical.json", &cs)
	if len(cs.Canonical) == 0 {
		t.Fatal("no cases")
	}
	for _, tc := range cs.Canonical {
		t.Run(tc.Rule+"/"+tc.Input, func(t *testing.T) {
			checkCanonical(t, tc.Input, tc.N, tc.P)
		})
	}
}

// checkCanonical checks both variants of input, and that each result is a
// fixed point.
func checkCanonical(t *testing.T, input, wantN, wantP string) {
	t.Helper()
	for _, c := range []struct {
		v    hasheduri.Variant
		want string
	}{{hasheduri.N, wantN}, {hasheduri.P, wantP}} {
		got, err := hasheduri.Canonical(input, c.v)
		if err != nil {
			t.Errorf("Canonical(%q, %v): %v", input, c.v, err)
			continue
		}
		if got != c.want {
			t.Errorf("Canonical(%q, %v) = %q, want %q", input, c.v, got, c.want)
		}
		again, err := hasheduri.Canonical(got, c.v)
		if err != nil || again != got {
			t.Errorf("Canonical(%q, %v) = %q, %v; not a fixed point", got, c.v, again, err)
		}
	}
}

func TestCanonicalKeep(t *testing.T) {
	var cs canonicalCases
	readJSON(t, "testdata/canonical.json", &cs)
	if len(cs.Keep) == 0 {
		t.Fatal("no cases")
	}
	for _, tc := range cs.Keep {
		t.Run(tc.Input+"/"+tc.Keep, func(t *testing.T) {
			keep := parseKeep(t, tc.Keep)
			got, err := hasheduri.CanonicalKeep(tc.Input, keep, hasheduri.N)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.N {
				t.Errorf("CanonicalKeep(%q, %v, N) = %q, want %q", tc.Input, keep, got, tc.N)
			}
		})
	}
}

func TestCanonicalErrors(t *testing.T) {
	var cs canonicalCases
	readJSON(t, "testdata/canonical.json", &cs)
	if len(cs.Errors) == 0 {
		t.Fatal("no cases")
	}
	for _, tc := range cs.Errors {
		t.Run(tc.Input, func(t *testing.T) {
			want := sentinel(t, tc.Err)
			for _, v := range []hasheduri.Variant{hasheduri.N, hasheduri.P} {
				got, err := hasheduri.Canonical(tc.Input, v)
				if !errors.Is(err, want) {
					t.Fatalf("Canonical(%q, %v) = %q, %v; want error %v", tc.Input, v, got, err, want)
				}
				var ue *hasheduri.URLError
				if !errors.As(err, &ue) || ue.Input != tc.Input || ue.Variant != v {
					t.Errorf("Canonical(%q, %v) error %#v is not a *URLError naming the input", tc.Input, v, err)
				}
				if msg := err.Error(); !strings.HasPrefix(msg, "hasheduri: ") || strings.Count(msg, "hasheduri:") != 1 {
					t.Errorf("error message %q: want one \"hasheduri: \" prefix", msg)
				}
				if _, err := hasheduri.Generate(tc.Input, hasheduri.SHA1, hasheduri.KeepBoth, v); !errors.Is(err, want) {
					t.Errorf("Generate(%q): %v, want %v", tc.Input, err, want)
				}
				u, err := hasheduri.Generate("http://h/", hasheduri.SHA1, hasheduri.KeepNone, v)
				if err != nil {
					t.Fatal(err)
				}
				if ok, err := u.Match(tc.Input, v); ok || !errors.Is(err, want) {
					t.Errorf("Match(%q) = %v, %v; want false, %v", tc.Input, ok, err, want)
				}
			}
		})
	}
}

func TestParse(t *testing.T) {
	var cs parseCases
	readJSON(t, "testdata/parse.json", &cs)
	if len(cs.Valid) == 0 {
		t.Fatal("no cases")
	}
	for _, tc := range cs.Valid {
		t.Run(tc.Input, func(t *testing.T) {
			got, err := hasheduri.Parse(tc.Input)
			if err != nil {
				t.Fatal(err)
			}
			digest, err := hex.DecodeString(tc.Hex)
			if err != nil {
				t.Fatal(err)
			}
			alg, err := hasheduri.ParseAlg(tc.Alg)
			if err != nil {
				t.Fatal(err)
			}
			want := hasheduri.URI{Alg: alg, Digest: digest, Frag: tc.Frag, Query: tc.Query}
			if !got.Equal(want) {
				t.Errorf("Parse(%q) = %+v, want %+v", tc.Input, got, want)
			}
			if s := got.String(); s != tc.String {
				t.Errorf("Parse(%q).String() = %q, want %q", tc.Input, s, tc.String)
			}
			if !got.IsValid() {
				t.Errorf("Parse(%q) is not valid", tc.Input)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	var cs parseCases
	readJSON(t, "testdata/parse.json", &cs)
	if len(cs.Invalid) == 0 {
		t.Fatal("no cases")
	}
	for _, tc := range cs.Invalid {
		t.Run(tc.Input, func(t *testing.T) {
			want := sentinel(t, tc.Err)
			got, err := hasheduri.Parse(tc.Input)
			if !errors.Is(err, want) {
				t.Fatalf("Parse(%q) = %+v, %v; want error %v", tc.Input, got, err, want)
			}
			var pe *hasheduri.ParseError
			if !errors.As(err, &pe) || pe.Input != tc.Input || pe.Kind != "hashed uri" {
				t.Errorf("Parse(%q) error %#v is not a *ParseError naming the input", tc.Input, err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "hasheduri: invalid hashed uri ") || strings.Count(msg, "hasheduri:") != 1 {
				t.Errorf("error message %q: want one \"hasheduri: invalid hashed uri \" prefix", msg)
			}
			var u hasheduri.URI
			if err := u.UnmarshalText([]byte(tc.Input)); !errors.Is(err, want) {
				t.Errorf("UnmarshalText(%q): %v, want %v", tc.Input, err, want)
			}
		})
	}
}

// TestRoundTrip checks Parse(u.String()) == u for every algorithm and flag
// combination, and that Parse ignores case.
func TestRoundTrip(t *testing.T) {
	for _, alg := range []hasheduri.Alg{hasheduri.MD5, hasheduri.SHA1, hasheduri.SHA256} {
		for _, keep := range []hasheduri.Keep{hasheduri.KeepNone, hasheduri.KeepFrag, hasheduri.KeepQuery, hasheduri.KeepBoth} {
			u, err := hasheduri.Generate("http://example.com/a?b#c", alg, keep, hasheduri.N)
			if err != nil {
				t.Fatal(err)
			}
			if len(u.Digest) != alg.Size() || u.Keep() != keep {
				t.Errorf("Generate(%v, %v) = %+v", alg, keep, u)
			}
			s := u.String()
			for _, in := range []string{s, strings.ToUpper(s)} {
				got, err := hasheduri.Parse(in)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Equal(u) {
					t.Errorf("Parse(%q) = %+v, want %+v", in, got, u)
				}
				if got.String() != s {
					t.Errorf("Parse(%q).String() = %q, want %q", in, got.String(), s)
				}
			}
			text, err := u.MarshalText()
			if err != nil || string(text) != s {
				t.Errorf("MarshalText() = %q, %v; want %q", text, err, s)
			}
			var back hasheduri.URI
			if err := back.UnmarshalText(text); err != nil || !back.Equal(u) {
				t.Errorf("UnmarshalText(%q) = %+v, %v", text, back, err)
			}
			b, err := json.Marshal(struct{ H hasheduri.URI }{u})
			if err != nil || string(b) != `{"H":"`+s+`"}` {
				t.Errorf("json.Marshal = %s, %v", b, err)
			}
		}
	}
}

func TestMatchFlags(t *testing.T) {
	for _, tc := range []struct {
		gen   string
		keep  hasheduri.Keep
		url   string
		match bool
	}{
		// Without flags, the query and fragment of the URL are ignored.
		{"http://h/p", hasheduri.KeepNone, "http://h/p?x#y", true},
		{"http://h/p", hasheduri.KeepNone, "http://h/q", false},
		// +query: the query must be the same; the fragment is ignored.
		{"http://h/p?x", hasheduri.KeepQuery, "http://h/p?x#y", true},
		{"http://h/p?x", hasheduri.KeepQuery, "http://h/p?z", false},
		{"http://h/p?x", hasheduri.KeepQuery, "http://h/p", false},
		// +frag recorded even without a fragment: a fragment then counts.
		{"http://h/p", hasheduri.KeepFrag, "http://h/p", true},
		{"http://h/p", hasheduri.KeepFrag, "http://h/p#y", false},
		{"http://h/p#y", hasheduri.KeepFrag, "http://h/p?q#y", true},
		{"http://h/p?q#y", hasheduri.KeepBoth, "HTTP://H:80/p?q#y", true},
		{"http://h/p?q#y", hasheduri.KeepBoth, "http://h/p?q#Y", false},
		// Equivalent spellings match.
		{"http://10.20.30.40/abc", hasheduri.KeepNone, "http://010.020.030.040/a%62c", true},
		{"http://h/a/b", hasheduri.KeepNone, "http://h/a/./x/../b", true},
	} {
		for _, alg := range []hasheduri.Alg{hasheduri.MD5, hasheduri.SHA1, hasheduri.SHA256} {
			u, err := hasheduri.Generate(tc.gen, alg, tc.keep, hasheduri.N)
			if err != nil {
				t.Fatal(err)
			}
			got, err := u.Match(tc.url, hasheduri.N)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.match {
				t.Errorf("%s (from %q).Match(%q) = %v, want %v", u, tc.gen, tc.url, got, tc.match)
			}
		}
	}
}

func TestMatchVariant(t *testing.T) {
	u, err := hasheduri.Generate("http://h/Dir/Page.html", hasheduri.SHA1, hasheduri.KeepNone, hasheduri.P)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url   string
		v     hasheduri.Variant
		match bool
	}{
		{"http://h/dir//page.htm", hasheduri.P, true},
		{"http://H/DIR/PAGE.HTML", hasheduri.P, true},
		{"http://h/dir/page.htm", hasheduri.N, true},
		{"http://h/Dir/Page.html", hasheduri.N, false},
	} {
		got, err := u.Match(tc.url, tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.match {
			t.Errorf("Match(%q, %v) = %v, want %v", tc.url, tc.v, got, tc.match)
		}
	}
}

func TestInvalidArguments(t *testing.T) {
	if _, err := hasheduri.Generate("http://h/", 0, hasheduri.KeepNone, hasheduri.N); !errors.Is(err, hasheduri.ErrUnknownAlgorithm) {
		t.Errorf("Generate with Alg(0): %v", err)
	}
	if _, err := hasheduri.Generate("http://h/", hasheduri.MD5, 4, hasheduri.N); !errors.Is(err, hasheduri.ErrUnknownKeep) {
		t.Errorf("Generate with Keep(4): %v", err)
	}
	if _, err := hasheduri.Generate("http://h/", hasheduri.MD5, hasheduri.KeepNone, 2); !errors.Is(err, hasheduri.ErrUnknownVariant) {
		t.Errorf("Generate with Variant(2): %v", err)
	}
	if _, err := hasheduri.Canonical("http://h/", 7); !errors.Is(err, hasheduri.ErrUnknownVariant) {
		t.Errorf("Canonical with Variant(7): %v", err)
	}
	for _, u := range []hasheduri.URI{
		{},
		{Alg: hasheduri.MD5, Digest: make([]byte, 20)},
		{Alg: 9, Digest: make([]byte, 16)},
	} {
		if ok, err := u.Match("http://h/", hasheduri.N); ok || err == nil {
			t.Errorf("%+v.Match = %v, %v; want an error", u, ok, err)
		}
		if _, err := u.MarshalText(); err == nil {
			t.Errorf("%+v.MarshalText: want an error", u)
		}
		if u.IsValid() {
			t.Errorf("%+v.IsValid() = true", u)
		}
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want hasheduri.Alg
		str  string
	}{
		{"md5", hasheduri.MD5, "md5"},
		{"MD5", hasheduri.MD5, "md5"},
		{"sha1", hasheduri.SHA1, "sha1"},
		{"x-sha256", hasheduri.SHA256, "x-sha256"},
		{"SHA256", hasheduri.SHA256, "x-sha256"},
	} {
		got, err := hasheduri.ParseAlg(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseAlg(%q) = %v, %v; want %v", tc.in, got, err, tc.str)
		}
	}
	for _, in := range []string{"", "sha-1", "sha384", "x-sha1"} {
		var pe *hasheduri.ParseError
		if _, err := hasheduri.ParseAlg(in); !errors.Is(err, hasheduri.ErrUnknownAlgorithm) || !errors.As(err, &pe) || pe.Input != in {
			t.Errorf("ParseAlg(%q): %v", in, err)
		}
	}
	for _, k := range []hasheduri.Keep{hasheduri.KeepNone, hasheduri.KeepFrag, hasheduri.KeepQuery, hasheduri.KeepBoth} {
		got, err := hasheduri.ParseKeep(strings.ToUpper(k.String()))
		if err != nil || got != k {
			t.Errorf("ParseKeep(%q) = %v, %v", k, got, err)
		}
	}
	if _, err := hasheduri.ParseKeep("all"); !errors.Is(err, hasheduri.ErrUnknownKeep) {
		t.Errorf("ParseKeep(all): %v", err)
	}
	for _, v := range []hasheduri.Variant{hasheduri.N, hasheduri.P} {
		for _, s := range []string{v.String(), strings.ToLower(v.String())} {
			got, err := hasheduri.ParseVariant(s)
			if err != nil || got != v {
				t.Errorf("ParseVariant(%q) = %v, %v", s, got, err)
			}
		}
	}
	if _, err := hasheduri.ParseVariant("q"); !errors.Is(err, hasheduri.ErrUnknownVariant) {
		t.Errorf("ParseVariant(q): %v", err)
	}
	var a hasheduri.Alg
	if err := json.Unmarshal([]byte(`"sha256"`), &a); err != nil || a != hasheduri.SHA256 {
		t.Errorf("json.Unmarshal alg = %v, %v", a, err)
	}
}

// TestAllocations pins the allocation counts of the hot paths: Match
// hashes without allocating for URLs that fit its stack buffer.
func TestAllocations(t *testing.T) {
	u, err := hasheduri.Generate("http://www.thus.net/a/b", hasheduri.SHA256, hasheduri.KeepNone, hasheduri.N)
	if err != nil {
		t.Fatal(err)
	}
	const url = "HTTP://www.Thus.net:80/a/./b?x#y"
	n := testing.AllocsPerRun(100, func() {
		if ok, err := u.Match(url, hasheduri.N); !ok || err != nil {
			t.Fatal("no match")
		}
	})
	if n != 0 {
		t.Errorf("Match allocates %v times, want 0", n)
	}
	n = testing.AllocsPerRun(100, func() {
		if _, err := hasheduri.Generate(url, hasheduri.SHA256, hasheduri.KeepNone, hasheduri.N); err != nil {
			t.Fatal(err)
		}
	})
	if n != 1 {
		t.Errorf("Generate allocates %v times, want 1 (the digest)", n)
	}
}

// TestLongURL exercises paths longer than the canonicaliser's stack
// buffers: many segments, dot segments and an index page at the end.
func TestLongURL(t *testing.T) {
	var in, want strings.Builder
	in.WriteString("HTTP://Example.COM:80")
	want.WriteString("http://example.com")
	for i := range 50 {
		seg := strings.Repeat("Seg", i%7+1)
		in.WriteString("/" + seg + "/./x%41/../")
		want.WriteString("/" + seg + "/")
	}
	in.WriteString("index.html?Q#F")
	want.WriteString("?Q#F")
	got, err := hasheduri.Canonical(in.String(), hasheduri.N)
	if err != nil {
		t.Fatal(err)
	}
	if got != want.String() {
		t.Errorf("Canonical(%q, N) =\n%q, want\n%q", in.String(), got, want.String())
	}
	u, err := hasheduri.Generate(in.String(), hasheduri.SHA256, hasheduri.KeepBoth, hasheduri.N)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := u.Match(want.String(), hasheduri.N); !ok || err != nil {
		t.Errorf("Match(canonical form) = %v, %v", ok, err)
	}
}
