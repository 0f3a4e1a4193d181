package ingest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// w3cCase is one test of the W3C RDF 1.1 suites (testdata/w3c/cases.json,
// written from the suites' manifests; see testdata/w3c/SOURCE).
type w3cCase struct {
	Suite  string `json:"suite"`
	ID     string `json:"id"`
	Type   string `json:"type"`
	Kind   string `json:"kind"` // eval, positive or negative
	Format string `json:"format"`
	Action string `json:"action"`
	Result string `json:"result"`
	Base   string `json:"base"`
}

func loadW3CCases(t testing.TB) []w3cCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "w3c", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []w3cCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// readIRIs reads the named test file as format f and returns its IRIs, or
// the first error.
func readIRIs(t testing.TB, name string, f Format, base string) ([]string, error) {
	t.Helper()
	file, err := os.Open(filepath.Join("testdata", "w3c", name))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var iris []string
	for rec, err := range Read(file, name, f, &Options{Base: base}) {
		if err != nil {
			return iris, err
		}
		iris = append(iris, rec.Text)
	}
	return iris, nil
}

// setOf returns the distinct strings of s, sorted.
func setOf(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// TestW3C runs every case of the W3C RDF 1.1 N-Triples, N-Quads, Turtle,
// TriG and RDF/XML suites: a positive syntax test reads without error, a
// negative one (syntax or evaluation) fails with a *LineError, and an
// evaluation test yields exactly the IRIs of its expected result (as sets:
// a graph holds a triple once however often it is written).
func TestW3C(t *testing.T) {
	cases := loadW3CCases(t)
	counts := map[string]int{}
	for _, tc := range cases {
		t.Run(tc.Suite+"/"+tc.ID, func(t *testing.T) {
			f, err := ParseFormat(tc.Format)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readIRIs(t, tc.Action, f, tc.Base)
			switch tc.Kind {
			case "positive":
				if err != nil {
					t.Fatalf("%s: %v", tc.Action, err)
				}
			case "negative":
				var le *LineError
				if !errors.As(err, &le) {
					t.Fatalf("%s: got %v, want a *LineError", tc.Action, err)
				}
			case "eval":
				if err != nil {
					t.Fatalf("%s: %v", tc.Action, err)
				}
				want, err := readIRIs(t, tc.Result, NTriples, "")
				if err != nil {
					t.Fatalf("%s: %v", tc.Result, err)
				}
				g, w := setOf(got), setOf(want)
				if !slices.Equal(g, w) {
					var extra, missing []string
					for _, s := range g {
						if _, ok := slices.BinarySearch(w, s); !ok {
							extra = append(extra, s)
						}
					}
					for _, s := range w {
						if _, ok := slices.BinarySearch(g, s); !ok {
							missing = append(missing, s)
						}
					}
					t.Fatalf("%s: IRIs differ from %s\nextra:   %s\nmissing: %s", tc.Action, tc.Result,
						strings.Join(extra, " "), strings.Join(missing, " "))
				}
			default:
				t.Fatalf("unknown kind %q", tc.Kind)
			}
		})
		counts[tc.Suite]++
	}
	// Every suite is there, whole: a lost file would pass silently.
	want := map[string]int{"ntriples": 70, "nquads": 87, "turtle": 313, "trig": 356, "rdfxml": 166}
	for s, n := range want {
		if counts[s] != n {
			t.Errorf("suite %s: %d cases, want %d", s, counts[s], n)
		}
	}
}
