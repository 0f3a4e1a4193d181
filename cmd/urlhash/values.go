package main

import (
	"encoding/hex"
	"time"

	"github.com/urlhash/urlhash/store"
)

// valueFlags are the flags that give every entry a command writes its
// data and expiry: --data and --ttl.
type valueFlags struct {
	data string
	ttl  time.Duration
}

func (v *valueFlags) addFlags(fs *flagSet) {
	fs.StringVar(&v.data, "data", "", "attach `TEXT`'s bytes to each entry (get shows them as hex, export --format jsonl as \"data\")")
	fs.DurationVar(&v.ttl, "ttl", 0, "each entry expires `DURATION` after now (this machine's clock), e.g. 24h; from then on every command treats it as absent (default 0: never)")
	fs.check(v.check)
}

func (v *valueFlags) check() error {
	if v.ttl < 0 {
		return usagef("--ttl must be 0 (never expire) or more, have %v", v.ttl)
	}
	if v.ttl > 0 && v.ttl < time.Second {
		return usagef("--ttl must be at least 1s (times are whole seconds), have %v", v.ttl)
	}
	return nil
}

// isSet reports whether the flags change the entries.
func (v *valueFlags) isSet() bool { return v.data != "" || v.ttl > 0 }

// apply sets the data and expiry of each entry that has none of its own
// (an imported jsonl entry may).
func (v *valueFlags) apply(entries []store.Entry, now time.Time) {
	set := v.setter(now)
	for i := range entries {
		set(&entries[i])
	}
}

// setter returns apply for one entry, with the data's bytes and the
// expiry computed once: the entries share them (backends only read them).
func (v *valueFlags) setter(now time.Time) func(*store.Entry) {
	var exp time.Time
	if v.ttl > 0 {
		exp = store.Unix(now.Add(v.ttl).Unix())
	}
	data := []byte(v.data)
	return func(e *store.Entry) {
		if len(data) > 0 && len(e.Value.Data) == 0 {
			e.Value.Data = data
		}
		if e.Value.Expires.IsZero() {
			e.Value.Expires = exp
		}
	}
}

// timeText formats a stored time for output ("" for none).
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// appendValueFields appends get's extra output fields for v to b:
// tab-separated data=HEX, first_seen=, last_seen= and expires= (RFC 3339),
// each only when set, so that a plain set entry prints as it always did.
func appendValueFields(b []byte, v *store.Value) []byte {
	if len(v.Data) > 0 {
		b = append(b, "\tdata="...)
		b = hex.AppendEncode(b, v.Data)
	}
	for _, f := range [...]struct {
		name string
		t    time.Time
	}{{"first_seen", v.FirstSeen}, {"last_seen", v.LastSeen}, {"expires", v.Expires}} {
		if !f.t.IsZero() {
			b = append(append(append(b, '\t'), f.name...), '=')
			b = f.t.UTC().AppendFormat(b, time.RFC3339)
		}
	}
	return b
}
