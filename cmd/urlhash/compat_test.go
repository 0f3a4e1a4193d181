package main

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestCompat opens indexes that older programs wrote (testdata/compat,
// written by its gen.sh): every answer those programs gave about them is
// this program's too, before and after a write upgrades the index, and
// writes on the upgraded index keep their times, values and counts.
func TestCompat(t *testing.T) {
	dir, err := filepath.Abs("testdata/compat")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, ".cache"))
			// A race-enabled program sleeps a second as it exits (to
			// report late races); the scripts run 330 of them.
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// unpack NAME.tar.gz extracts testdata/compat/NAME.tar.gz
			// into the work directory.
			"unpack": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: unpack NAME.tar.gz")
				}
				ts.Check(unpack(filepath.Join(dir, args[0]), ts.MkAbs(".")))
			},
			// sleep DURATION waits: expiries of a second pass.
			"sleep": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: sleep DURATION")
				}
				d, err := time.ParseDuration(args[0])
				ts.Check(err)
				time.Sleep(d)
			},
		},
	})
}

// unpack extracts the gzipped tar file name (directories and regular
// files only, no path out of dst) into dst.
func unpack(name, dst string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(h.Name) {
			return &os.PathError{Op: "unpack", Path: h.Name, Err: os.ErrInvalid}
		}
		path := filepath.Join(dst, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, h.FileInfo().Mode().Perm())
		default:
			err = &os.PathError{Op: "unpack", Path: h.Name, Err: os.ErrInvalid}
		}
		if err != nil {
			return err
		}
	}
}

// writeFile writes r to path, making its directory.
func writeFile(path string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
