package uts46

import (
	"strings"
	"testing"
)

// typicalHosts are hosts as URLs carry them: ASCII, IDN and ASCII forms of
// IDNs.
var typicalHosts = []string{
	"www.example.com",
	"WWW.Example.COM",
	"xn--bcher-kva.example",
	"bücher.example",
	"日本語.jp",
	"\u0646\u0627\u0645\u0647\u200c\u0627\u06cc.com",
	"ｅｘａｍｐｌｅ．ｃｏｍ",
	"a.b.c.xn--pokxncvks",
}

// cjkDomain returns about n bytes of CJK labels of labelLen code points.
func cjkDomain(n, labelLen int) string {
	var b strings.Builder
	for i := 0; b.Len() < n-3; i++ {
		if i > 0 && i%labelLen == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(rune(0x4E00 + (i*7919)%20000))
	}
	return b.String()
}

func BenchmarkToASCII(b *testing.B) {
	b.Run("typical", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ToASCII(typicalHosts[i%len(typicalHosts)])
		}
	})
	for _, bc := range []struct {
		name   string
		domain string
		ok     bool
	}{
		{"label-1k", cjkDomain(3*1000, 1000), true},
		{"label-10k", cjkDomain(3*10000, 10000), false},
		{"label-38k", cjkDomain(3*38000, 38000), false},
		{"domain-1MB-labels-1k", cjkDomain(1<<20, 1000), true},
		{"domain-1MB-ascii", strings.Repeat("abcdefghi.", 1<<20/10), true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if _, err := ToASCII(bc.domain); (err == nil) != bc.ok {
				b.Fatalf("ToASCII: %v", err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.domain)))
			for b.Loop() {
				ToASCII(bc.domain)
			}
		})
	}
}
