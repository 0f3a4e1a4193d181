package threatlist

import (
	"context"
	"encoding/base64"
	"math/rand/v2"
	"net/http/httptest"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
)

// million returns a list of a million random 4-byte prefixes.
func million(r *rand.Rand) *List {
	var b Builder
	raw := make([]byte, 4*1_000_000)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	b.AddConcat(4, raw)
	return b.List()
}

// BenchmarkSyncReset applies a RESET of a million 4-byte prefixes (Rice
// coded, as Google sends them) to a new index: fetch, decode, checksum,
// state file, index writes and sync.
func BenchmarkSyncReset(b *testing.B) {
	v1 := million(rand.New(rand.NewPCG(1, 1)))
	srv := &fakeServer{rice: true, versions: []*List{v1}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &Client{Endpoint: ts.URL, Key: "k"}
	srv.body("")
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		db, err := index.Open(b.TempDir(), &index.Options{Profile: "webrisk"})
		if err != nil {
			b.Fatal(err)
		}
		ls := openLists(b, db)
		b.StartTimer()
		if _, err := ls.SyncWebRisk(context.Background(), c, DiffRequest{ThreatType: "MALWARE"}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(v1.Len()), "prefixes")
}

// BenchmarkSyncDiff applies DIFFs of 10,000 entries (5,000 removals, 5,000
// additions) to an index holding a million prefixes.
func BenchmarkSyncDiff(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	v1 := million(r)
	srv := &fakeServer{rice: true, versions: []*List{v1}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &Client{Endpoint: ts.URL, Key: "k"}
	db, err := index.Open(b.TempDir(), &index.Options{Profile: "webrisk"})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ls := openLists(b, db)
	ctx := context.Background()
	if _, err := ls.SyncWebRisk(ctx, c, DiffRequest{ThreatType: "MALWARE"}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		// The next version: 5,000 removals and 5,000 additions. The fake
		// server's tokens are one byte: start over before they run out.
		if len(srv.versions) == 250 {
			srv.versions = srv.versions[:1]
			if _, err := ls.SyncWebRisk(ctx, c, DiffRequest{ThreatType: "MALWARE"}); err != nil {
				b.Fatal(err)
			}
		}
		cur := srv.versions[len(srv.versions)-1]
		removals := make([]int32, 0, 5000)
		for i := range 5000 {
			removals = append(removals, int32(i*(cur.Len()/5000)))
		}
		var add Builder
		raw := make([]byte, 4*5000)
		for i := range raw {
			raw[i] = byte(r.Uint32())
		}
		add.AddConcat(4, raw)
		next, _, err := cur.Apply(removals, add.List())
		if err != nil {
			b.Fatal(err)
		}
		srv.set("", next)
		srv.body(base64.StdEncoding.EncodeToString(ls.Version(WebRiskName("MALWARE"))))
		b.StartTimer()
		u, err := ls.SyncWebRisk(ctx, c, DiffRequest{ThreatType: "MALWARE"})
		if err != nil {
			b.Fatal(err)
		}
		if u.Reset {
			b.Fatal("a RESET, not a DIFF")
		}
	}
}

// BenchmarkFirstLookup opens an index holding a synced list of a million
// prefixes read-only, as "urlhash lookup" does, and looks one hash up.
func BenchmarkFirstLookup(b *testing.B) {
	ctx := context.Background()
	v1 := million(rand.New(rand.NewPCG(3, 3)))
	srv := &fakeServer{rice: true, versions: []*List{v1}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := b.TempDir()
	db, err := index.Open(dir, &index.Options{Profile: "webrisk"})
	if err != nil {
		b.Fatal(err)
	}
	ls := openLists(b, db)
	if _, err := ls.SyncWebRisk(ctx, &Client{Endpoint: ts.URL, Key: "k"}, DiffRequest{ThreatType: "MALWARE"}); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	var h hashkey.Hash
	copy(h[:], v1.Concat(4)[4*1234:])
	for b.Loop() {
		db, err := index.Open(dir, &index.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		m, ok, err := db.Match(ctx, h)
		if err != nil || !ok || m.Len != 4 {
			b.Fatalf("match %v %v %v", m, ok, err)
		}
		db.Close()
	}
}
