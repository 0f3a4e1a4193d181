package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

// webRiskServer serves an in-memory index of profile with the full hashes
// of the expressions full and the 4-byte prefixes of those of prefixes.
func webRiskServer(t *testing.T, profile string, full, prefixes []string, o *Options) *httptest.Server {
	ctx := context.Background()
	t.Helper()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.SetProfile(ctx, profile); err != nil {
		t.Fatal(err)
	}
	var es []store.Entry
	for _, e := range full {
		es = append(es, store.FullEntry(hashkey.Sum([]byte(e)), store.Value{}))
	}
	for _, e := range prefixes {
		es = append(es, store.Entry{Hash: hashkey.Sum([]byte(e)), Len: 4})
	}
	if err := db.PutBatch(ctx, es); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(New(db, o))
	t.Cleanup(ts.Close)
	return ts
}

var timestampRE = regexp.MustCompile(`"(expireTime|negativeExpireTime)":"([^"]*)"`)

// TestWebRisk: /v1/uris:search and /v1/hashes:search answer as the Web Risk
// v1 Lookup API does, over a Safe Browsing list index.
func TestWebRisk(t *testing.T) {
	sbProfile := safebrowsing.WebRisk.Name() + ";unicode=" + safebrowsing.WebRisk.UnicodeVersion()
	ts := webRiskServer(t, sbProfile, []string{"evil.example/", "bad.example/a/"}, []string{"prefixonly.example/"}, nil)
	evil := hashkey.Sum([]byte("evil.example/"))
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct {
		name   string
		query  string
		status int
		want   string // with every timestamp replaced by "T"
	}{
		// uris:search: a threat when a full hash of one of the URI's
		// expressions is stored.
		{"uri listed", "uris:search?threatTypes=MALWARE&uri=" + url.QueryEscape("http://www.evil.example/login?x=1"), 200,
			`{"threat":{"threatTypes":["MALWARE"],"expireTime":"T"}}`},
		{"uri path prefix", "uris:search?threatTypes=MALWARE&uri=http://bad.example/a/b/c.html", 200,
			`{"threat":{"threatTypes":["MALWARE"],"expireTime":"T"}}`},
		{"uri not listed", "uris:search?threatTypes=MALWARE&uri=http://bad.example/b/", 200, `{}`},
		{"uri of a prefix entry only", "uris:search?threatTypes=MALWARE&uri=http://prefixonly.example/", 200, `{}`},
		{"another list asked", "uris:search?threatTypes=SOCIAL_ENGINEERING&uri=http://evil.example/", 200, `{}`},
		{"several lists asked", "uris:search?threatTypes=SOCIAL_ENGINEERING&threatTypes=MALWARE&uri=http://evil.example/", 200,
			`{"threat":{"threatTypes":["MALWARE"],"expireTime":"T"}}`},
		// A URI that does not parse is a client's mistake, not "not listed".
		{"uri with a space in its host", "uris:search?threatTypes=MALWARE&uri=" + url.QueryEscape("not a url"), 400,
			`{"error":{"code":400,"message":"uri \"not a url\" does not parse: invalid character \" \" in host name","status":"INVALID_ARGUMENT"}}`},
		{"uri with an unclosed IPv6 host", "uris:search?threatTypes=MALWARE&uri=" + url.QueryEscape("http://[::1"), 400,
			`{"error":{"code":400,"message":"uri \"http://[::1\" does not parse: missing ']' in host","status":"INVALID_ARGUMENT"}}`},
		{"uri with a bad escape", "uris:search?threatTypes=MALWARE&uri=" + url.QueryEscape("http://evil.example/%zz"), 400,
			`{"error":{"code":400,"message":"uri \"http://evil.example/%zz\" does not parse: invalid URL escape \"%zz\"","status":"INVALID_ARGUMENT"}}`},
		{"uri of no host", "uris:search?threatTypes=MALWARE&uri=" + url.QueryEscape("http:///a"), 400,
			`{"error":{"code":400,"message":"uri \"http:///a\" does not parse: no host","status":"INVALID_ARGUMENT"}}`},
		{"uri without a scheme", "uris:search?threatTypes=MALWARE&uri=evil.example/x", 200,
			`{"threat":{"threatTypes":["MALWARE"],"expireTime":"T"}}`},
		{"uri missing", "uris:search?threatTypes=MALWARE", 400,
			`{"error":{"code":400,"message":"uri is required","status":"INVALID_ARGUMENT"}}`},
		{"threat types missing", "uris:search?uri=http://evil.example/", 400,
			`{"error":{"code":400,"message":"threatTypes is required","status":"INVALID_ARGUMENT"}}`},
		{"unknown threat type", "uris:search?threatTypes=VIRUS&uri=http://evil.example/", 400,
			`{"error":{"code":400,"message":"threatTypes: unknown threat type \"VIRUS\"","status":"INVALID_ARGUMENT"}}`},

		// hashes:search: the stored full hashes that start with the prefix.
		{"prefix listed", "hashes:search?threatTypes=MALWARE&hashPrefix=" + base64.RawURLEncoding.EncodeToString(evil[:4]), 200,
			`{"threats":[{"threatTypes":["MALWARE"],"hash":"` + b64(evil[:]) + `","expireTime":"T"}],"negativeExpireTime":"T"}`},
		{"full hash, standard base64", "hashes:search?threatTypes=MALWARE&hashPrefix=" + url.QueryEscape(b64(evil[:])), 200,
			`{"threats":[{"threatTypes":["MALWARE"],"hash":"` + b64(evil[:]) + `","expireTime":"T"}],"negativeExpireTime":"T"}`},
		{"prefix not listed", "hashes:search?threatTypes=MALWARE&hashPrefix=AAAAAA", 200, `{"negativeExpireTime":"T"}`},
		{"prefix entries are no full hashes", "hashes:search?threatTypes=MALWARE&hashPrefix=" +
			base64.RawURLEncoding.EncodeToString(func() []byte { h := hashkey.Sum([]byte("prefixonly.example/")); return h[:4] }()), 200,
			`{"negativeExpireTime":"T"}`},
		{"prefix too short", "hashes:search?threatTypes=MALWARE&hashPrefix=AAAA", 400,
			`{"error":{"code":400,"message":"hashPrefix \"AAAA\": 3 bytes, want 4 to 32","status":"INVALID_ARGUMENT"}}`},
		{"prefix not base64", "hashes:search?threatTypes=MALWARE&hashPrefix=!!!!!!", 400, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Get(ts.URL + "/v1/" + tc.query)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			got := b.String()
			for _, m := range timestampRE.FindAllStringSubmatch(got, -1) {
				ts, err := time.Parse(time.RFC3339Nano, m[2])
				if err != nil || !ts.After(time.Now()) {
					t.Errorf("%s %q: not a future RFC 3339 time", m[1], m[2])
				}
			}
			got = timestampRE.ReplaceAllString(got, `"$1":"T"`)
			if resp.StatusCode != tc.status || (tc.want != "" && got != tc.want+"\n") {
				t.Errorf("got %d %s\nwant %d %s", resp.StatusCode, got, tc.status, tc.want)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// TestWebRiskRefusals: an index of another profile is no list, and with a
// token the key parameter (how Web Risk clients authenticate) must carry
// it.
func TestWebRiskRefusals(t *testing.T) {
	sbProfile := safebrowsing.V5.Name() + ";unicode=" + safebrowsing.V5.UnicodeVersion()
	tests := []struct {
		name, profile, token, query string
		status                      int
	}{
		{"url-hash index", "urlhash+sha256;unicode=" + safebrowsing.V5.UnicodeVersion(), "", "uris:search?threatTypes=MALWARE&uri=http://a.example/", 400},
		{"other unicode tables", "safebrowsing-v5;unicode=1.0.0", "", "uris:search?threatTypes=MALWARE&uri=http://a.example/", 400},
		{"safebrowsing-v5 list", sbProfile, "", "uris:search?threatTypes=MALWARE&uri=http://a.example/", 200},
		{"key missing", sbProfile, "s3cret", "uris:search?threatTypes=MALWARE&uri=http://a.example/", 401},
		{"key wrong", sbProfile, "s3cret", "hashes:search?threatTypes=MALWARE&hashPrefix=AAAAAA&key=nope", 401},
		{"key right", sbProfile, "s3cret", "hashes:search?threatTypes=MALWARE&hashPrefix=AAAAAA&key=s3cret", 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := webRiskServer(t, tc.profile, nil, nil, &Options{Token: tc.token})
			resp, err := http.Get(ts.URL + "/v1/" + tc.query)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d (%v), want %d", resp.StatusCode, body, tc.status)
			}
		})
	}
}

// TestWebRiskThreatType: a list of another threat type answers for it.
func TestWebRiskThreatType(t *testing.T) {
	sbProfile := safebrowsing.WebRisk.Name() + ";unicode=" + safebrowsing.WebRisk.UnicodeVersion()
	ts := webRiskServer(t, sbProfile, []string{"phish.example/"}, nil, &Options{ThreatType: "SOCIAL_ENGINEERING"})
	for _, tc := range []struct {
		asked string
		want  bool
	}{{"MALWARE", false}, {"SOCIAL_ENGINEERING", true}} {
		resp, err := http.Get(ts.URL + "/v1/uris:search?uri=http://phish.example/&threatTypes=" + tc.asked)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Threat *struct{ ThreatTypes []string }
		}
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if got := out.Threat != nil; got != tc.want || (got && out.Threat.ThreatTypes[0] != "SOCIAL_ENGINEERING") {
			t.Errorf("asked %s: threat %+v, want listed %v", tc.asked, out.Threat, tc.want)
		}
	}
}

func FuzzDecodeHashPrefix(f *testing.F) {
	for _, s := range []string{"AAAAAA", "AAAAAA==", "+/+/+/", "-_-_-_", "", "AAAA", base64.RawURLEncoding.EncodeToString(make([]byte, 33))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := decodeHashPrefix(s)
		if err != nil {
			return
		}
		if len(b) < 4 || len(b) > hashkey.Size {
			t.Fatalf("%q: %d bytes accepted", s, len(b))
		}
		if back, err := decodeHashPrefix(base64.URLEncoding.EncodeToString(b)); err != nil || !bytes.Equal(back, b) {
			t.Fatalf("%q: %x does not round-trip: %x, %v", s, b, back, err)
		}
	})
}
