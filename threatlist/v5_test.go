package threatlist

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/urlhash/urlhash/threatlist/rice"
)

// v5Additions encodes the size-byte entries of l as the v5 additions field
// of their width.
func v5Additions(t *testing.T, h *HashList, l *List, size int) {
	raw := l.Concat(size)
	r := &v5Rice{}
	switch size {
	case 4:
		var vs []uint32
		for i := 0; i < len(raw); i += 4 {
			vs = append(vs, binary.BigEndian.Uint32(raw[i:]))
		}
		first, count, data, err := rice.Encode32(vs, 20)
		if err != nil {
			t.Fatal(err)
		}
		r.FirstValue, r.EntriesCount, r.EncodedData = Uint64(first), count, data
		r.RiceParameter = 20
		h.AdditionsFourBytes = r
	case 8:
		var vs []uint64
		for i := 0; i < len(raw); i += 8 {
			vs = append(vs, binary.BigEndian.Uint64(raw[i:]))
		}
		first, count, data, err := rice.Encode64(vs, 50)
		if err != nil {
			t.Fatal(err)
		}
		r.FirstValue, r.EntriesCount, r.EncodedData, r.RiceParameter = Uint64(first), count, data, 50
		h.AdditionsEightBytes = r
	case 16, 32:
		k := 120
		if size == 32 {
			k = 250
		}
		first, count, data, err := rice.EncodeWide(size, raw, k)
		if err != nil {
			t.Fatal(err)
		}
		r.EntriesCount, r.EncodedData, r.RiceParameter = count, data, k
		p := func(i int) Uint64 { return Uint64(binary.BigEndian.Uint64(first[8*i:])) }
		if size == 16 {
			r.FirstValueHi, r.FirstValueLo = p(0), p(1)
			h.AdditionsSixteenBytes = r
		} else {
			r.FirstValueFirstPart, r.FirstValueSecondPart, r.FirstValueThirdPart, r.FirstValueFourthPart = p(0), p(1), p(2), p(3)
			h.AdditionsThirtyTwoBytes = r
		}
	}
}

func sizedList(r *rand.Rand, n, size int) *List {
	var b Builder
	e := make([]byte, size)
	for range n {
		for j := range e {
			e[j] = byte(r.Uint32())
		}
		b.Add(e)
	}
	return b.List()
}

// TestSyncSafeBrowsing syncs v5 hash lists of every width: a full update,
// a partial one with removals, an unchanged list (no checksum), and a bad
// checksum that changes nothing.
func TestSyncSafeBrowsing(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	sizes := map[string]int{"se": 4, "mw": 8, "x16": 16, "x32": 32}
	names := []string{"mw", "se", "x16", "x32"}
	cur := map[string]*List{}
	var answer BatchGetResponse
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		if !slices.Equal(q["names"], names) {
			http.Error(w, "names", 400)
			return
		}
		asked = q["version"]
		json.NewEncoder(w).Encode(answer)
	}))
	defer srv.Close()
	dir := t.TempDir()
	db := openIndex(t, dir)
	ls := openLists(t, db)
	c := &Client{Endpoint: srv.URL}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

	// Full updates.
	answer = BatchGetResponse{}
	for _, n := range names {
		l := sizedList(r, 300, sizes[n])
		cur[n] = l
		sum := l.Checksum()
		h := HashList{Name: n, Version: []byte(n + "1"), Sha256Checksum: sum[:], MinimumWaitDuration: "300.5s"}
		v5Additions(t, &h, l, sizes[n])
		answer.HashLists = append(answer.HashLists, h)
	}
	us, err := ls.SyncSafeBrowsing(context.Background(), c, BatchGetRequest{Names: names}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !us["se"].Reset || !us["se"].Next.Equal(now.Add(300500*time.Millisecond)) {
		t.Fatalf("se: %+v", us["se"])
	}
	var all Builder
	for _, n := range names {
		for e := range cur[n].All() {
			all.Add(e)
		}
	}
	if !indexEntries(t, db).Equal(all.List()) {
		t.Fatal("index after the full updates")
	}

	// Partial updates: se removes and adds; the others are unchanged.
	answer = BatchGetResponse{}
	add := sizedList(r, 50, 4)
	removals := []uint32{0, 10, 299}
	next, _, err := cur["se"].Apply([]int32{0, 10, 299}, add)
	if err != nil {
		t.Fatal(err)
	}
	sum := next.Checksum()
	h := HashList{Name: "se", Version: []byte("se2"), PartialUpdate: true, Sha256Checksum: sum[:]}
	v5Additions(t, &h, add, 4)
	first, count, data, _ := rice.Encode32(removals, 5)
	h.CompressedRemovals = &v5Rice{FirstValue: Uint64(first), EntriesCount: count, EncodedData: data, RiceParameter: 5}
	answer.HashLists = append(answer.HashLists, h)
	for _, n := range names[:1] {
		answer.HashLists = append(answer.HashLists, HashList{Name: n, Version: []byte(n + "1b"), PartialUpdate: true})
	}
	for _, n := range names[2:] {
		answer.HashLists = append(answer.HashLists, HashList{Name: n, Version: []byte(n + "1"), PartialUpdate: true})
	}
	if _, err := ls.SyncSafeBrowsing(context.Background(), c, BatchGetRequest{Names: names}, now); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 4 {
		t.Fatalf("versions sent: %q", asked)
	}
	cur["se"] = next
	if !ls.State(SafeBrowsingName("se")).List.Equal(next) || string(ls.Version(SafeBrowsingName("mw"))) != "mw1b" {
		t.Fatal("state after the partial updates")
	}

	// A bad checksum: nothing applied, se's version forgotten.
	before := indexEntries(t, db)
	answer.HashLists[0].Sha256Checksum = bytes.Repeat([]byte{1}, 32)
	if _, err := ls.SyncSafeBrowsing(context.Background(), c, BatchGetRequest{Names: names}, now); !errors.Is(err, ErrChecksum) {
		t.Fatalf("bad checksum: %v", err)
	}
	if !indexEntries(t, db).Equal(before) || len(ls.Version(SafeBrowsingName("se"))) != 0 {
		t.Fatal("a bad checksum changed the index, or kept the version")
	}
}

// TestHashListRefuses: malformed v5 lists are errors.
func TestHashListRefuses(t *testing.T) {
	for name, h := range map[string]HashList{
		"two widths":        {AdditionsFourBytes: &v5Rice{FirstValue: 1}, AdditionsEightBytes: &v5Rice{FirstValue: 1}},
		"parameter too low": {AdditionsFourBytes: &v5Rice{RiceParameter: 2, EntriesCount: 1, EncodedData: []byte{0}}},
		"64-bit parameter":  {AdditionsEightBytes: &v5Rice{RiceParameter: 34, EntriesCount: 1, EncodedData: make([]byte, 8)}},
		"removals in reset": {CompressedRemovals: &v5Rice{FirstValue: 1}},
		"short checksum":    {Sha256Checksum: []byte{1, 2}},
		"bad duration":      {MinimumWaitDuration: "5m"},
		"hostile count":     {AdditionsFourBytes: &v5Rice{RiceParameter: 3, EntriesCount: MaxEntries + 1, EncodedData: make([]byte, 1<<10)}},
	} {
		if _, err := h.Decode(time.Now()); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
