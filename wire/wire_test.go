package wire

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	for n, line := range tableLines(t, "keys.txt") {
		in, want, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("keys.txt:%d: no tab", n)
		}
		got, err := ParseKey(in)
		if want == "error" {
			if err == nil {
				t.Errorf("keys.txt:%d: ParseKey(%q) = %q, want an error", n, in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("keys.txt:%d: ParseKey(%q) = %q, %v; want %q", n, in, got, err, want)
		}
		if back, err := ParseKey(FormatKey(got)); err != nil || back != got {
			t.Errorf("keys.txt:%d: FormatKey round trip: %q, %v", n, back, err)
		}
	}
	if _, err := ParseKey(strings.Repeat("k", MaxKeyLen+1)); err == nil {
		t.Error("a key over MaxKeyLen was taken")
	}
	if k := NewKey(); len(k) != 32 || k == NewKey() {
		t.Errorf("NewKey = %q", k)
	}
}

func TestSplitLines(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []string
	}{
		{"", nil},
		{"\n", []string{""}},
		{"a\nb", []string{"a", "b"}},
		{"a\r\nb\r\n", []string{"a", "b"}},
		{"a\r\r\n", []string{"a\r"}},
		{"\r\n\r\n", []string{"", ""}},
	} {
		lines, err := SplitLines([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range lines {
			got = append(got, string(l))
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("SplitLines(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
	if _, err := SplitLines(bytes.Repeat([]byte("a"), MaxLineLen+1)); err == nil {
		t.Error("a line over MaxLineLen was taken")
	}
	if _, err := SplitLines(bytes.Repeat([]byte("\n"), MaxLines+1)); err == nil {
		t.Error("more than MaxLines lines were taken")
	}
}

// TestAnswersGolden pins the answer bytes.
func TestAnswersGolden(t *testing.T) {
	var b []byte
	b = AppendAnswer(b, New, "")
	b = AppendAnswer(b, Present, "")
	b = AppendAnswer(b, Absent, "")
	b = AppendAnswer(b, Invalid, "bad\tthing\r\nhere")
	want := "new\npresent\nabsent\ninvalid\tbad thing  here\n"
	if string(b) != want {
		t.Fatalf("answers = %q, want %q", b, want)
	}
	got, err := ParseAnswers(b, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Answer != New || got[1].Answer != Present || got[2].Answer != Absent || got[3].Answer != Invalid || got[3].Reason != "bad thing  here" {
		t.Errorf("ParseAnswers = %+v", got)
	}
	for _, bad := range []string{"new\n", "maybe\nnew\n", "new\textra\nnew\n"} {
		if _, err := ParseAnswers([]byte(bad), 2); err == nil {
			t.Errorf("ParseAnswers(%q, 2) took it", bad)
		}
	}
	// The digest covers each part: moving a byte between them changes it.
	if RequestDigest("POST", "/v1/add", "a=1", []byte("x")) == RequestDigest("POST", "/v1/add", "a=1x", nil) {
		t.Error("RequestDigest does not separate query and body")
	}
}

func FuzzSplitLines(f *testing.F) {
	for _, s := range []string{"", "\n", "a\r\nb", "https://example.com/\n\n", "\r\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		lines, err := SplitLines(body)
		if err != nil {
			return
		}
		var b []byte
		for _, l := range lines {
			if bytes.ContainsAny(l, "\n") {
				t.Fatalf("line %q holds LF", l)
			}
			b = append(append(b, l...), '\n')
		}
		again, err := SplitLines(b)
		if err != nil || len(again) != len(lines) {
			t.Fatalf("SplitLines of its own lines: %d lines, %v; want %d", len(again), err, len(lines))
		}
	})
}

func FuzzParseAnswers(f *testing.F) {
	f.Add([]byte("new\npresent\ninvalid\tx\n"), 3)
	f.Add([]byte("absent"), 1)
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		got, err := ParseAnswers(body, n)
		if err != nil {
			return
		}
		var b []byte
		for _, a := range got {
			b = AppendAnswer(b, a.Answer, a.Reason)
		}
		if again, err := ParseAnswers(b, n); err != nil || len(again) != len(got) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{`"a"`, "a", `"\"\\"`, `""`, `"x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		k, err := ParseKey(v)
		if err != nil {
			return
		}
		if back, err := ParseKey(FormatKey(k)); err != nil || back != k {
			t.Fatalf("ParseKey(FormatKey(%q)) = %q, %v", k, back, err)
		}
	})
}
