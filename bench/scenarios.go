package main

import "os"

func scenarios() []scenario {
	freshDBs := func(w *work) error {
		if err := os.RemoveAll(w.oursDB); err != nil {
			return err
		}
		return os.RemoveAll(w.plainDB)
	}
	return []scenario{
		{
			name:     "hash",
			input:    "urls.txt",
			ours:     func(w *work) []string { return []string{w.urlhash, "hash"} },
			baseline: func(w *work) []string { return []string{w.whatwg, "hash"} },
		},
		{
			name:     "canon-webrisk",
			input:    "urls.txt",
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
	}
}
