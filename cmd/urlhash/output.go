package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// hashOutput is the --json object of hash and canon.
type hashOutput struct {
	Input     string   `json:"input"`
	Canonical string   `json:"canonical,omitempty"`
	Hashed    string   `json:"hashed,omitempty"` // the string hashed, when not the canonical form
	Hash      string   `json:"hash,omitempty"`
	Short     string   `json:"short,omitempty"`
	VeryShort string   `json:"very_short,omitempty"`
	Words     []string `json:"words,omitempty"`
	Profile   string   `json:"profile,omitempty"`
	Error     string   `json:"error,omitempty"`
}

func newHashOutput(input string, canonical []byte, h hashkey.Hash, profile string) hashOutput {
	w := h.Words()
	return hashOutput{
		Input:     input,
		Canonical: string(canonical),
		Hash:      h.String(),
		Short:     h.Short().String(),
		VeryShort: h.VeryShort().String(),
		Words: []string{
			strconv.FormatUint(w[0], 10), strconv.FormatUint(w[1], 10),
			strconv.FormatUint(w[2], 10), strconv.FormatUint(w[3], 10),
		},
		Profile: profile,
	}
}

func writeJSON(c *chunk, v any) {
	if err := newJSONWriter(&c.out).Encode(v); err != nil {
		panic(err) // only plain structs of strings are encoded here
	}
}

// failLine reports a failed input of a one-line-per-input command: a
// diagnostic on stderr and, so that output lines stay aligned with inputs,
// an error object (--json) or an empty line on stdout.
func failLine(c *chunk, r input, err error, asJSON bool) {
	c.fail(r, err)
	if asJSON {
		writeJSON(c, hashOutput{Input: r.text, Error: err.Error()})
	} else {
		c.out.WriteByte('\n')
	}
}

// entryOutput is the --json object of scan and export.
type entryOutput struct {
	Hash   string  `json:"hash"`
	Prefix bool    `json:"prefix,omitempty"`
	Text   *string `json:"text,omitempty"`
	Data   string  `json:"data,omitempty"`
	// Times in RFC 3339, when the entry records them.
	FirstSeen string `json:"first_seen,omitempty"`
	LastSeen  string `json:"last_seen,omitempty"`
	Expires   string `json:"expires,omitempty"`
}

func newEntryOutput(en *store.Entry) entryOutput {
	o := entryOutput{Hash: hexKey(en), Prefix: en.IsPrefix(), Data: hex.EncodeToString(en.Value.Data),
		FirstSeen: timeText(en.Value.FirstSeen), LastSeen: timeText(en.Value.LastSeen), Expires: timeText(en.Value.Expires)}
	if en.Value.Text != nil {
		t := string(en.Value.Text)
		o.Text = &t
	}
	return o
}

func writeEntry(out *bufio.Writer, en *store.Entry) error {
	var buf [2 * hashkey.Size]byte
	out.Write(hex.AppendEncode(buf[:0], en.Key()))
	if len(en.Value.Text) > 0 {
		out.WriteByte('\t')
		out.Write(en.Value.Text)
	}
	return out.WriteByte('\n')
}

// memberOutput is the --json object of has, get, add, delete and dedupe.
type memberOutput struct {
	Input   string  `json:"input"`
	Hash    string  `json:"hash,omitempty"`
	New     *bool   `json:"new,omitempty"`
	Present *bool   `json:"present,omitempty"`
	Text    *string `json:"text,omitempty"`
	Data    string  `json:"data,omitempty"`
	// Times in RFC 3339 (get), when the entry records them.
	FirstSeen string `json:"first_seen,omitempty"`
	LastSeen  string `json:"last_seen,omitempty"`
	Expires   string `json:"expires,omitempty"`
	Error     string `json:"error,omitempty"`
	// Recovered marks a dedupe output printed again from a crashed run's
	// journal.
	Recovered *bool `json:"recovered,omitempty"`
}

func newJSONWriter(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
