package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// sitemapEvents reads data with a sitemap reader and returns what it yields,
// one string each: "LINE TEXT" for a record, "LINE kind: MESSAGE" for a
// *LineError, "fatal: MESSAGE" for another error.
func sitemapEvents(read func(*bufio.Reader, string, *Options, func(Record, error) bool), data []byte, max int) []string {
	var out []string
	o := Options{MaxLineBytes: max}
	o = o.withDefaults()
	read(bufio.NewReader(bytes.NewReader(data)), "f", &o, func(r Record, err error) bool {
		var le *LineError
		switch {
		case err == nil:
			out = append(out, fmt.Sprintf("%d %q", r.Line, r.Text))
		case errors.As(err, &le):
			out = append(out, fmt.Sprintf("%d %s: %v", r.Line, errorKind(err), err))
		default:
			out = append(out, "fatal: "+err.Error())
		}
		return true
	})
	return out
}

// errorKind names the sentinel err wraps.
func errorKind(err error) string {
	for _, k := range []error{ErrSyntax, ErrNotSitemap, ErrEmptyLoc, ErrLineTooLong, ErrLimit} {
		if errors.Is(err, k) {
			return strings.TrimPrefix(k.Error(), "ingest: ")
		}
	}
	return "other"
}

// readSitemapBuf is readSitemapXML with the signature of readSitemap.
func readSitemapBuf(br *bufio.Reader, name string, o *Options, yield func(Record, error) bool) {
	readSitemapXML(br, name, o, yield)
}

// sitemapDiff compares the scanner with the encoding/xml model on data and
// returns a description of the difference, or "". Records and the kinds and
// lines of errors must agree; messages may differ where the model's are
// encoding/xml's own (an XML declaration, a long name), and the line of an
// error the model finds only at the end of a token (a bad character) may be
// earlier. Where the scanner goes over a limit the model has none, so only
// what comes before is compared; the same where the model refuses a
// non-ASCII name, which the scanner checks by the current (fifth) edition
// of XML 1.0, and encoding/xml by the fourth.
func sitemapDiff(data []byte, max int) string {
	got := sitemapEvents(readSitemap, data, max)
	want := sitemapEvents(readSitemapBuf, data, max)
	if n := len(got); n > 0 && strings.Contains(got[n-1], ": over a limit: ") {
		if len(want) < n-1 || !equalEvents(got[:n-1], want[:n-1]) {
			return fmt.Sprintf("before the limit: scanner %q\nmodel %q", got, want)
		}
		return ""
	}
	if n := len(want); n > 0 && strings.Contains(want[n-1], "invalid XML name: ") && !isASCII(data) {
		if len(got) < n-1 || !equalEvents(got[:n-1], want[:n-1]) {
			return fmt.Sprintf("before a name: scanner %q\nmodel %q", got, want)
		}
		return ""
	}
	if !equalEvents(got, want) {
		return fmt.Sprintf("scanner %q\nmodel   %q", got, want)
	}
	return ""
}

func equalEvents(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] == want[i] {
			continue
		}
		// Syntax errors: the kinds must agree; lines and messages may not.
		if !strings.Contains(got[i], " syntax error: ") || !strings.Contains(want[i], " syntax error: ") {
			return false
		}
	}
	return true
}

// TestSitemapModel checks the scanner against the encoding/xml model on the
// sitemap test files and on inputs at the edges of the XML it reads.
func TestSitemapModel(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if d := sitemapStrictDiff(data); d != "" {
			t.Errorf("%s:\n%s", file, d)
		}
	}
	const (
		open  = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>`
		close = "</loc></url></urlset>"
	)
	for _, in := range []string{
		// References
		open + `&amp;&lt;&gt;&quot;&apos;` + close,
		open + `&#65;&#x41;&#0065;&#x0041;&#x10FFFF;` + close,
		open + `&#xD800;` + close,
		open + `&#0;` + close,
		open + `&#1;` + close,
		open + `&#xFFFE;` + close,
		open + `&#x110000;` + close,
		open + `&#99999999999999999999;` + close,
		open + `&#;` + close,
		open + `&#x;` + close,
		open + `&#X41;` + close,
		open + `&#65` + close,
		open + `&amp` + close,
		open + `& b` + close,
		open + `&;` + close,
		open + `&nbsp;` + close,
		open + `&é;` + close,
		open + `&a.b;` + close,
		open + `&` + "\n" + close,
		// Line ends and white space
		open + "http://a/\r\nb\rc\n\r" + close,
		open + " \t\r\n http://a/ \r\n" + close,
		open + "&#13;&#10;http://a/&#32;" + close,
		open + "&#13;\nx" + close,
		// CDATA
		open + `<![CDATA[x]]]>` + close,
		open + `<![CDATA[]]>` + close,
		open + `<![CDATA[a]]b]]]]>` + close,
		open + "<![CDATA[a\r\nb&amp;<x>]]>" + close,
		open + ` a <![CDATA[ b ]]> c ` + close,
		open + `a]]>b` + close,
		open + `a]]b>c` + close,
		open + `<![CDAT[x]]>` + close,
		open + "<![CDATA[x\x01]]>" + close,
		// Comments and processing instructions
		open + `<!-- a -- b -->` + close,
		open + `<!---->x` + close,
		open + `<!--->-->x` + close,
		open + `<!-x-->` + close,
		open + `a<?pi x?>b<?pi?>c` + close,
		open + `<? pi?>` + close,
		`<?xml version="1.1"?>` + open + close,
		`<?xml version="1.0" encoding="utf-8"?>` + open + close,
		`<?xml version="1.0" encoding="ISO-8859-1"?>` + open + close,
		`<?xml version='1.0' encoding='UTF-8' standalone='yes'?>` + open + "x" + close,
		`<?xml-stylesheet href="a.xsl"?>` + open + "x" + close,
		`<?xml?>` + open + "x" + close,
		// Declarations
		`<!DOCTYPE urlset [<!ENTITY x "a>b"> <!-- c > --> <!ELEMENT urlset ANY>]>` + open + "x" + close,
		`<!DOCTYPE urlset [<!ENTITY x "y">]>` + open + "&x;" + close,
		`<!DOCTYPE urlset SYSTEM 'a>b'>` + open + "x" + close,
		`<!DOCTYPE urlset <x>>` + open + "x" + close,
		`<!>` + open + "x" + close,
		`<!DOCTYPE urlset [<!-- -- >` + open + "x" + close,
		// Attributes
		`<urlset a='1' b="2"><url><loc>x` + close,
		`<urlset a="1"b="2"><url><loc>x` + close,
		`<urlset a=1><url><loc>x` + close,
		`<urlset a><url><loc>x` + close,
		`<urlset a = "1" ><url ><loc >x` + close,
		`<urlset a="<"><url><loc>x` + close,
		`<urlset a="]]>&amp;&#10;'"><url><loc>x` + close,
		`<urlset a="` + "\x01" + `"><url><loc>x` + close,
		`<urlset =""><url><loc>x` + close,
		`<urlset a/><url><loc>x` + close,
		`<urlset/ ><url><loc>x` + close,
		// Namespaces
		`<urlset xmlns=""><url><loc>x` + close,
		`<urlset xmlns="other"><url><loc>x` + close,
		`<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9"><s:url><s:loc>x</s:loc></s:url></s:urlset>`,
		`<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>x</loc></url></s:urlset>`,
		`<s:urlset><url><loc>x</loc></url></s:urlset>`,
		`<xmlns:urlset/>`,
		`<xml:urlset/>`,
		`<urlset xmlns:s=""><s:url><s:loc>x</s:loc></s:url></urlset>`,
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns="other"/>`,
		`<urlset xmlns="other" xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>x` + close,
		open + `a</loc></url><url xmlns="o"><loc>b</loc></url><url><loc xmlns="o">c</loc></url><url><loc>d` + close,
		`<urlset xmlns="` + strings.Repeat("n", 100) + `"/>`,
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9x"/>`,
		`<urlset xmlns:=""/>`,
		`<urlset xmlns:a:b=""/>`,
		`<:urlset/>`,
		`<urlset:/>`,
		// Names and end tags
		`<urlset><url><loc>x</loc></url></urlset >`,
		`<urlset><url><loc>x</loc></url></urlset x>`,
		`<urlset><url><loc>x</loc></url></urlsetx>`,
		`<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9"></t:urlset>`,
		`<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9"></urlset>`,
		`<urlset></s:urlset>`,
		`</urlset>`,
		`<a:b:c/>`,
		`<1a/>`,
		`<.a/>`,
		`<é/>`,
		`<urlset><ʰ/><a‿/><𐀀/></urlset>`, // fifth edition names, refused by encoding/xml
		`<urlset><a.b-c_d·/></urlset>`,
		`< urlset/>`,
		`<>`,
		`</>`,
		`<urlset></ urlset>`,
		"<urlset>\xff</urlset>",
		"<urlset\xff/>",
		"<urlset><\xc3\xa9\xff/></urlset>",
		// Structure
		`<urlset/>`,
		`<urlset></urlset><urlset><url><loc>x` + close,
		`<urlset></urlset><rss/>`,
		`text<urlset><url><loc>x` + close + "text",
		"\xef\xbb\xbf" + open + "x" + close,
		open + close,
		`<urlset><url><loc/></url></urlset>`,
		open + `a<b>c</b>d<![CDATA[e]]>` + close,
		`<urlset><url><x><loc>x</loc></x></url></urlset>`,
		`<urlset><loc>x</loc></urlset>`,
		`<sitemapindex><sitemap><loc>x</loc></sitemap><url><loc>y</loc></url></sitemapindex>`,
		`<urlset><url><loc>a</loc><loc>b</loc></url></urlset>`,
		"<urlset>\n<url>\n<loc\n>\nx\n</loc>\n</url>\n</urlset>",
		"\n\n<rss\n/>",
		"",
		"  ",
		"<!-- c -->",
		// Bad characters, truncated input
		"<urlset>\x01</urlset>",
		"<urlset>\n\n\x01\n</urlset>",
		"<urlset>\n\xff\n</urlset>",
		open + "\xef\xbf\xbe" + close,
		open + "\xed\xa0\x80" + close,
		"<urlset",
		"<urlset a",
		"<urlset a=",
		`<urlset a="`,
		`<urlset a="x`,
		"<urlset>",
		"<urlset><!-- x",
		"<urlset><![CDATA[ x",
		"<urlset><? x",
		"<urlset><!DOCTYPE x",
		"<urlset>&",
		"<urlset>&#",
		"<urlset>&#x1",
		"<urlset>&am",
		"<urlset></",
		"<urlset></urlset",
		"<",
		"<!",
		"<!-",
		"<![",
		"<?",
	} {
		if d := sitemapStrictDiff([]byte(in)); d != "" {
			t.Errorf("%q:\n%s", in, d)
		}
	}
}

// sitemapStrictDiff is sitemapDiff, but also the lines and messages of
// syntax errors must agree, but where they are known to differ: the scanner
// reports a bad character on its own line, not at the end of its token,
// and says more plainly that it reads only UTF-8.
func sitemapStrictDiff(data []byte) string {
	if d := sitemapDiff(data, 0); d != "" {
		return d
	}
	got := sitemapEvents(readSitemap, data, 0)
	want := sitemapEvents(readSitemapBuf, data, 0)
	for i := range got {
		if got[i] == want[i] {
			continue
		}
		var gl, wl int
		var gm, wm string
		fmt.Sscanf(got[i], "%d", &gl)
		fmt.Sscanf(want[i], "%d", &wl)
		_, gm, _ = strings.Cut(got[i], "malformed XML: ")
		_, wm, _ = strings.Cut(want[i], "malformed XML: ")
		switch {
		case gm == wm && gl < wl && (gm == "invalid UTF-8" || strings.HasPrefix(gm, "illegal character code")):
		case gl == wl && strings.HasSuffix(gm, "declared; only UTF-8 is read") && strings.HasSuffix(wm, "declared but Decoder.CharsetReader is nil"):
		default:
			return fmt.Sprintf("messages: scanner %q\n          model   %q", got, want)
		}
	}
	return ""
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
