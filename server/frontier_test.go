package server

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/urlhash/urlhash/frontier"
)

// TestFrontierEndpoints runs testdata/frontier: requests to the
// /v1/frontier/ endpoints of a server with a frontier, each answered with
// its status and body.
//
//	post PATH [key=IDEMPOTENCY-KEY]   body: the input
//	get PATH
//	sleep DURATION
func TestFrontierEndpoints(t *testing.T) {
	f, err := frontier.Open(filepath.Join(t.TempDir(), "frontier"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, ts, _ := newTestServer(t, &Options{Frontier: func(bool) (*frontier.Frontier, error) { return f, nil }})
	datadriven.RunTest(t, "testdata/frontier", func(t *testing.T, td *datadriven.TestData) string {
		var code int
		var body string
		// The path's query holds "=": datadriven splits it as an argument.
		path := td.CmdArgs[0].Key
		if len(td.CmdArgs[0].Vals) > 0 {
			path += "=" + strings.Join(td.CmdArgs[0].Vals, ",")
		}
		switch td.Cmd {
		case "post":
			var key string
			if a, ok := td.Arg("key"); ok {
				key = a.Vals[0]
			}
			code, body = post(t, ts, path, key, []byte(td.Input))
		case "get":
			req, err := http.NewRequest("GET", ts.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			code, body = send(t, ts.Client(), req)
		case "sleep":
			d, err := time.ParseDuration(td.CmdArgs[0].Key)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(d)
			return ""
		default:
			t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
		}
		if body == "" {
			body = "(empty)"
		}
		return fmt.Sprintf("%d\n%s", code, strings.TrimSuffix(body, "\n")+"\n")
	})
}

// TestNoFrontier: a server without a frontier answers its endpoints 404.
func TestNoFrontier(t *testing.T) {
	_, ts, _ := newTestServer(t, nil)
	if code, body := post(t, ts, "/v1/frontier/claim", "", nil); code != http.StatusNotFound {
		t.Errorf("claim without a frontier: %d %s", code, body)
	}
}
