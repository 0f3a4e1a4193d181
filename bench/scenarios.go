package main

import (
	"fmt"
	"os"
	"os/exec"
)

func scenarios() []scenario {
	freshDBs := func(w *work) error {
		w.loaded = false
		if err := os.RemoveAll(w.oursDB); err != nil {
			return err
		}
		return os.RemoveAll(w.plainDB)
	}
	// loadedDBs builds both stores from urls.txt once, untimed, for the
	// lookup scenarios.
	loadedDBs := func(w *work) error {
		if w.loaded {
			return nil
		}
		if err := freshDBs(w); err != nil {
			return err
		}
		for _, argv := range [][]string{
			{w.urlhash, "import", "--db", w.oursDB, "urls.txt"},
			{w.badger, "import", w.plainDB},
		} {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = w.dir
			in, err := os.Open(w.path("urls.txt"))
			if err != nil {
				return err
			}
			cmd.Stdin = in
			out, err := cmd.CombinedOutput()
			in.Close()
			if err != nil {
				return fmt.Errorf("%v: %v\n%s", argv, err, out)
			}
		}
		w.loaded = true
		return nil
	}
	// textDBs builds both dictionaries (hash -> URL text) from urls.txt
	// once, untimed, for the lookup scenarios on values.
	textDBs := func(w *work) error {
		if w.textLoaded {
			return nil
		}
		for _, dir := range []string{w.oursTextDB, w.plainTextDB} {
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
		}
		for _, argv := range [][]string{
			{w.urlhash, "import", "--store-url", "--db", w.oursTextDB, "urls.txt"},
			{w.badger, "import-urls", w.plainTextDB},
		} {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = w.dir
			in, err := os.Open(w.path("urls.txt"))
			if err != nil {
				return err
			}
			cmd.Stdin = in
			out, err := cmd.CombinedOutput()
			in.Close()
			if err != nil {
				return fmt.Errorf("%v: %v\n%s", argv, err, out)
			}
		}
		w.textLoaded = true
		return nil
	}
	freshTextDBs := func(w *work) error {
		w.textLoaded = false
		if err := os.RemoveAll(w.oursTextDB); err != nil {
			return err
		}
		return os.RemoveAll(w.plainTextDB)
	}
	return []scenario{
		{
			name:     "hash",
			input:    "urls.txt",
			sizeFree: true,
			ours:     func(w *work) []string { return []string{w.urlhash, "hash"} },
			baseline: func(w *work) []string { return []string{w.whatwg, "hash"} },
			check:    sameLines,
		},
		{
			name:     "canon-webrisk",
			input:    "urls.txt",
			sizeFree: true,
			ours:     func(w *work) []string { return []string{w.urlhash, "canon", "--profile", "webrisk"} },
			baseline: func(w *work) []string { return []string{w.whatwg, "sbcanon"} },
		},
		{
			name:     "import",
			input:    "urls.txt",
			prepare:  freshDBs,
			ours:     func(w *work) []string { return []string{w.urlhash, "import", "--db", w.oursDB, "-"} },
			baseline: func(w *work) []string { return []string{w.badger, "import", w.plainDB} },
		},
		{
			name:     "dedupe",
			input:    "urls.txt",
			prepare:  freshDBs,
			ours:     func(w *work) []string { return []string{w.urlhash, "dedupe", "--db", w.oursDB} },
			baseline: func(w *work) []string { return []string{w.badger, "dedupe", w.plainDB} },
			check:    sameLines,
		},
		{
			name:     "has-present",
			input:    "present.txt",
			prepare:  loadedDBs,
			ours:     func(w *work) []string { return []string{w.urlhash, "has", "-q", "--db", w.oursDB} },
			baseline: func(w *work) []string { return []string{w.badger, "has", w.plainDB} },
		},
		{
			name:     "has-absent",
			input:    "absent.txt",
			exitOurs: 1,
			prepare:  loadedDBs,
			ours:     func(w *work) []string { return []string{w.urlhash, "has", "-q", "--db", w.oursDB} },
			baseline: func(w *work) []string { return []string{w.badger, "has", w.plainDB} },
		},
		{
			name:    "import-hashes",
			input:   "hashes.txt",
			prepare: freshDBs,
			ours: func(w *work) []string {
				return []string{w.urlhash, "import", "--input-format", "hashes", "--db", w.oursDB, "-"}
			},
			baseline: func(w *work) []string { return []string{w.badger, "import-hashes", w.plainDB} },
		},
		{
			name:     "has-present-hashes",
			input:    "present-hashes.txt",
			prepare:  loadedDBs,
			ours:     func(w *work) []string { return []string{w.urlhash, "has", "--hashes", "-q", "--db", w.oursDB} },
			baseline: func(w *work) []string { return []string{w.badger, "has-hashes", w.plainDB} },
		},
		{
			name:     "has-absent-hashes",
			input:    "absent-hashes.txt",
			exitOurs: 1,
			prepare:  loadedDBs,
			ours:     func(w *work) []string { return []string{w.urlhash, "has", "--hashes", "-q", "--db", w.oursDB} },
			baseline: func(w *work) []string { return []string{w.badger, "has-hashes", w.plainDB} },
		},
		{
			// Many processes, one index: the same lookups through
			// "urlhash serve" (loopback HTTP) against the plain program
			// reading the directory itself.
			name:    "has-present-served",
			input:   "present-hashes.txt",
			prepare: loadedDBs,
			served:  true,
			ours: func(w *work) []string {
				return []string{w.urlhash, "has", "--hashes", "-q", "--db", w.addr}
			},
			baseline: func(w *work) []string { return []string{w.badger, "has-hashes", w.plainDB} },
		},
		{
			// Dedupe through the server, every write durable before it
			// is answered.
			name:     "dedupe-served",
			input:    "urls.txt",
			prepare:  freshDBs,
			served:   true,
			ours:     func(w *work) []string { return []string{w.urlhash, "dedupe", "--db", w.addr} },
			baseline: func(w *work) []string { return []string{w.badger, "dedupe", w.plainDB} },
			check:    sameLines,
		},
		{
			// A crawler's revisits: new, or last printed 24 hours ago or
			// more; the first sighting records its time (the baseline
			// keeps it as the value, a transaction per URL).
			name:    "dedupe-revisit",
			input:   "urls.txt",
			prepare: freshDBs,
			ours: func(w *work) []string {
				return []string{w.urlhash, "dedupe", "--revisit-after", "24h", "--db", w.oursDB}
			},
			baseline: func(w *work) []string { return []string{w.badger, "dedupe-revisit", w.plainDB} },
			check:    sameLines,
		},
		{
			// A dictionary: every identity with its URL text.
			name:     "import-store-url",
			input:    "urls.txt",
			prepare:  freshTextDBs,
			ours:     func(w *work) []string { return []string{w.urlhash, "import", "--store-url", "--db", w.oursTextDB, "-"} },
			baseline: func(w *work) []string { return []string{w.badger, "import-urls", w.plainTextDB} },
		},
		{
			// The dictionary read back: present hashes, their text printed.
			name:     "get-present-text",
			input:    "get-hashes.txt",
			prepare:  textDBs,
			ours:     func(w *work) []string { return []string{w.urlhash, "get", "--hashes", "--db", w.oursTextDB} },
			baseline: func(w *work) []string { return []string{w.badger, "get-hashes", w.plainTextDB} },
			// The text may differ: urlhash keeps the first spelling of an
			// identity, the plain program the last.
			check: sameFields(2),
		},
		{
			name:     "has-absent-text",
			input:    "absent-hashes.txt",
			exitOurs: 1,
			prepare:  textDBs,
			ours:     func(w *work) []string { return []string{w.urlhash, "has", "--hashes", "-q", "--db", w.oursTextDB} },
			baseline: func(w *work) []string { return []string{w.badger, "has-hashes", w.plainTextDB} },
		},
		{
			// A read command's fixed cost: open, close, nothing asked.
			name:     "has-empty",
			input:    "empty.txt",
			prepare:  loadedDBs,
			ours:     func(w *work) []string { return []string{w.urlhash, "has", "--hashes", "-q", "--db", w.oursDB} },
			baseline: func(w *work) []string { return []string{w.badger, "has-hashes", w.plainDB} },
		},
	}
}
