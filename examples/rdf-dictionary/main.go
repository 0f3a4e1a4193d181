// Command rdf-dictionary shows urlhash as the IRI dictionary of a graph
// store: every IRI of an N-Triples file, then of a Turtle file (prefixed
// names expanded, relative IRIs resolved), gets a stable 32-byte identity, the
// index maps identities back to IRIs, and the 8-byte very-short hash serves
// as a compact term id, with collisions detected rather than assumed away.
//
// It uses the iri profile: RDF compares IRIs character by character, so
// <HTTP://Example.ORG:80/~bob/> and <http://example.org/~bob/> are two
// terms with two identities (the URL profiles would merge them).
//
//	go run ./examples/rdf-dictionary
package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/iri"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/ingest"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/store"
)

//go:embed data.nt
var graph []byte

//go:embed data.ttl
var more []byte

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal("rdf-dictionary: ", err)
	}
}

// run is the example; it writes what it shows to w.
func run(w io.Writer) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rdf-dictionary-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// StoreURL keeps each IRI's text, so that hash -> IRI lookups work.
	db, err := index.Open(dir, nil)
	if err != nil {
		return err
	}
	dict, err := query.New(ctx, db, &query.Options{Profile: iri.IRI, StoreURL: true})
	if err != nil {
		return err
	}
	defer dict.Close()

	occurrences := 0
	sources := []struct {
		name   string
		data   []byte
		format ingest.Format
	}{
		{"data.nt", graph, ingest.NTriples},
		{"data.ttl", more, ingest.Turtle},
	}
	for _, src := range sources {
		fmt.Fprintf(w, "-- %s\n", src.name)
		if err := addTerms(ctx, w, db, dict, src.name, src.data, src.format, &occurrences); err != nil {
			return err
		}
	}
	st, err := db.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d IRI occurrences, %d distinct terms, no term id collisions\n", occurrences, st.Entries)

	// The homepage was written HTTP://Example.ORG:80/~bob/: under RDF term
	// equality another spelling is another term.
	for _, term := range []string{"HTTP://Example.ORG:80/~bob/", "http://example.org/~bob/", "http://example.org/people/dave"} {
		v, err := dict.Get(ctx, term)
		switch {
		case err == nil:
			fmt.Fprintf(w, "lookup %s -> stored as %q\n", term, v.Text)
		case errors.Is(err, store.ErrNotFound):
			fmt.Fprintf(w, "lookup %s -> not in the dictionary\n", term)
		default:
			return err
		}
	}

	// Resolve a term id back to its IRI: a prefix scan by very-short hash.
	h, err := dict.Hash("http://xmlns.com/foaf/0.1/knows")
	if err != nil {
		return err
	}
	id := h.VeryShort()
	return db.Scan(ctx, id[:], 8*hashkey.Size8, 0, func(e store.Entry) error {
		fmt.Fprintf(w, "term %s resolves to %s\n", id, e.Value.Text)
		return nil
	})
}

// addTerms adds every IRI of one RDF document to the dictionary and prints
// each new term with its id.
func addTerms(ctx context.Context, w io.Writer, db *index.DB, dict *query.Index, name string, data []byte, format ingest.Format, occurrences *int) error {
	for rec, err := range ingest.Read(bytes.NewReader(data), name, format, nil) {
		if err != nil {
			return err
		}
		*occurrences++
		added, err := dict.Add(ctx, rec.Text)
		if err != nil {
			return err
		}
		if !added {
			continue
		}
		// The term id is the very-short hash. A new term whose id another
		// stored hash already starts with would merge two terms: detect it
		// with a prefix count instead of assuming 64 bits never collide.
		h, err := dict.Hash(rec.Text)
		if err != nil {
			return err
		}
		id := h.VeryShort()
		full, _, err := db.Count(ctx, id[:], 8*hashkey.Size8)
		if err != nil {
			return err
		}
		if full > 1 {
			return fmt.Errorf("term id %s is shared by %d IRIs; widen ids to the short hash", id, full)
		}
		fmt.Fprintf(w, "term %s  %s\n", id, rec.Text)
	}
	return nil
}
