package frontier

import (
	"context"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	f, clock, dir := openTest(t, nil)
	ctx := context.Background()
	res := mustPut(t, f, discovered("", "https://a.example/1", "https://A.EXAMPLE:443/1", "https://a.example/2", "https://b.example/1", "not a url"))
	t.Log(res)
	if err := f.SetDelay(ctx, "", "", 0); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, f, GetParams{MaxPerQueue: 1})
	t.Log(got)
	got = mustGet(t, f, GetParams{MaxPerQueue: 1})
	t.Log("again (transit)", got)
	got = mustGet(t, f, GetParams{MaxPerQueue: 2})
	t.Log("max 2", got)
	s, _ := f.Stats("", "")
	t.Logf("%+v", s)
	clock.Advance(31 * time.Second)
	got = mustGet(t, f, GetParams{MaxPerQueue: 2})
	t.Log("after expiry", got)
	mustPut(t, f, []Item{{Info: URLInfo{URL: "https://a.example/1"}, Known: true}})
	s, _ = f.Stats("", "")
	t.Logf("%+v", s)
	f.Close()
	f = reopen(t, dir, clock)
	waitRecount(f)
	s, _ = f.Stats("", "")
	t.Logf("reopened %+v", s)
	clock.Advance(31 * time.Second)
	got = mustGet(t, f, GetParams{})
	t.Log("after reopen", got)
}
