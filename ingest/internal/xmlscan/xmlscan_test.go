package xmlscan

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// recorder is a Handler that writes down what it is told, one line an
// event: "start DEPTH {SPACE}LOCAL ATTR=VALUE...", "end DEPTH", "text
// DATA" (the pieces of a run joined), and at the end the error.
type recorder struct {
	out  strings.Builder
	text strings.Builder
	// textAt, when set, makes character data go to the handler only
	// inside elements of that local name.
	textAt string
}

func (r *recorder) StartElement(s *Scanner) error {
	e, err := s.StartElement()
	if err != nil {
		return err
	}
	fmt.Fprintf(&r.out, "start %d {%s}%s", s.Depth(), e.Name.Space, e.Name.Local)
	for _, a := range e.Attr {
		fmt.Fprintf(&r.out, " {%s}%s=%q", a.Name.Space, a.Name.Local, a.Value)
	}
	r.out.WriteByte('\n')
	s.SetText(r.textAt == "" || string(s.Local()) == r.textAt)
	return nil
}

func (r *recorder) EndElement(s *Scanner) error {
	fmt.Fprintf(&r.out, "end %d\n", s.Depth())
	s.SetText(r.textAt == "")
	return nil
}

func (r *recorder) CharData(b []byte) { r.text.Write(b) }

func (r *recorder) TextEnd(*Scanner) error {
	fmt.Fprintf(&r.out, "text %q\n", r.text.String())
	r.text.Reset()
	return nil
}

// scan runs a scanner over in with the options o and returns its events
// and how it ended.
func scan(in io.Reader, o Options, textAt string) string {
	r := &recorder{textAt: textAt}
	s := New(in, r, o)
	s.SetText(textAt == "")
	err := s.Run()
	var e *Error
	switch {
	case err == nil:
		r.out.WriteString("ok\n")
	case errors.As(err, &e):
		fmt.Fprintf(&r.out, "error %d line %d: %v\n", e.Kind, e.Line, err)
	default:
		fmt.Fprintf(&r.out, "handler error: %v\n", err)
	}
	return r.out.String()
}

var scanTests = []struct {
	name   string
	in     string
	o      Options
	textAt string
	want   string
}{
	// Structure, namespaces and attributes.
	{"elements", `<a xmlns="http://n/" xmlns:p="http://p/"><p:b p:x="1" y='2'/></a>`, Options{MaxDepth: 8, MaxValue: 64}, "x",
		"start 1 {http://n/}a\nstart 2 {http://p/}b {http://p/}x=\"1\" {}y=\"2\"\nend 2\nend 1\nok\n"},
	{"text and references", "<a>x &lt;&#x41;&#66;\r\ny<![CDATA[<]]]]>z</a>", Options{MaxDepth: 8, MaxValue: 64}, "",
		"start 1 {}a\ntext \"x <AB\\ny\"\ntext \"<]]\"\ntext \"z\"\nend 1\nok\n"},
	{"text only where asked", "<a>no<b>yes</b>no</a>", Options{MaxDepth: 8, MaxValue: 64}, "b",
		"start 1 {}a\nstart 2 {}b\ntext \"yes\"\nend 2\nend 1\nok\n"},
	{"white space skipped", "<a> \n <b/>\t x <![CDATA[ ]]></a>", Options{MaxDepth: 8, MaxValue: 64, SkipSpace: true}, "",
		"start 1 {}a\nstart 2 {}b\nend 2\ntext \"x \"\nend 1\nok\n"},
	{"doctype skipped", `<!DOCTYPE a [<!ENTITY e "x">]><!-- c --><?pi x?><a/>`, Options{MaxDepth: 8, MaxValue: 64}, "x",
		"start 1 {}a\nend 1\nok\n"},
	// Errors, each of its kind and line.
	{"unbound prefix", "<a>\n<p:b/></a>", Options{MaxDepth: 8, MaxValue: 64}, "x",
		"start 1 {}a\nerror 0 line 2: unbound namespace prefix \"p\"\n"},
	{"mismatched end", "<a>\n</b>", Options{MaxDepth: 8, MaxValue: 64}, "x",
		"start 1 {}a\nerror 0 line 2: element <a> closed by </b>\n"},
	{"declared entity", `<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>`, Options{MaxDepth: 8, MaxValue: 64}, "",
		"start 1 {}a\nerror 0 line 1: invalid character entity &e;\n"},
	{"unexpected EOF", "<a><b>", Options{MaxDepth: 8, MaxValue: 64}, "x",
		"start 1 {}a\nstart 2 {}b\nerror 0 line 1: unexpected EOF\n"},
	{"too deep", "<a><a><a/></a></a>", Options{MaxDepth: 2, MaxValue: 64}, "x",
		"start 1 {}a\nstart 2 {}a\nerror 1 line 1: elements nested deeper than 2\n"},
	{"value too long", `<a x="12345"/>`, Options{MaxDepth: 2, MaxValue: 4}, "x",
		"error 2 line 1: an attribute value of more than 4 bytes\n"},
	{"encoding", `<?xml version="1.0" encoding="latin1"?><a/>`, Options{MaxDepth: 2, MaxValue: 4}, "x",
		"error 0 line 1: encoding \"latin1\" declared; only UTF-8 is read\n"},
}

func TestScan(t *testing.T) {
	for _, tc := range scanTests {
		t.Run(tc.name, func(t *testing.T) {
			if got := scan(strings.NewReader(tc.in), tc.o, tc.textAt); got != tc.want {
				t.Errorf("events\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// spaceOnly is a Handler that notes the namespace of each element, as
// Space gives it.
type spaceOnly struct{ got []string }

func (h *spaceOnly) StartElement(s *Scanner) error {
	space, whole := s.Space()
	h.got = append(h.got, fmt.Sprintf("%s %v", space, whole))
	return nil
}
func (*spaceOnly) EndElement(*Scanner) error { return nil }
func (*spaceOnly) CharData([]byte)           {}
func (*spaceOnly) TextEnd(*Scanner) error    { return nil }

// TestSpace: with MaxValue 0, a namespace name is kept in part when long,
// and Space says so; an unbound prefix is its own namespace, as in
// encoding/xml.
func TestSpace(t *testing.T) {
	long := "http://n/" + strings.Repeat("x", 100)
	h := &spaceOnly{}
	in := `<a xmlns="http://n/"><b xmlns="` + long + `"><p:c/><xml:d/></b></a>`
	if err := New(strings.NewReader(in), h, Options{MaxDepth: 8}).Run(); err != nil {
		t.Fatal(err)
	}
	want := []string{"http://n/ true", long[:maxQuote+1] + " false", "p true", XMLNamespace + " true"}
	if fmt.Sprint(h.got) != fmt.Sprint(want) {
		t.Errorf("spaces %q, want %q", h.got, want)
	}
}

// TestReadError: a read error ends the scan as an Error of kind Read that
// wraps it.
func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("<a>"), iotest.ErrReader(boom))
	err := New(r, &recorder{}, Options{MaxDepth: 8}).Run()
	var e *Error
	if !errors.As(err, &e) || e.Kind != Read || !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want a Read error wrapping boom", err)
	}
}

// TestPieces: a document read a byte at a time scans as it does whole
// (its tokens cut anywhere by the read buffer).
func TestPieces(t *testing.T) {
	for _, tc := range scanTests {
		whole := scan(strings.NewReader(tc.in), tc.o, tc.textAt)
		if got := scan(iotest.OneByteReader(strings.NewReader(tc.in)), tc.o, tc.textAt); got != whole {
			t.Errorf("%s a byte at a time:\n%s\nwhole:\n%s", tc.name, got, whole)
		}
	}
}

func FuzzScan(f *testing.F) {
	for _, tc := range scanTests {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		o := Options{MaxDepth: 16, MaxValue: 256}
		whole := scan(strings.NewReader(in), o, "")
		if got := scan(iotest.HalfReader(strings.NewReader(in)), o, ""); got != whole {
			t.Fatalf("read in halves:\n%s\nwhole:\n%s", got, whole)
		}
	})
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"a", true}, {"é-1.b", true}, {"_x", true}, {"1a", false}, {"-a", false}, {"a:b", false}, {"", false}, {"a b", false},
	} {
		if got := IsNCName(tc.s); got != tc.want {
			t.Errorf("IsNCName(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}
