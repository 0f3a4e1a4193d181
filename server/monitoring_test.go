package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// metricName matches the names of the server's metrics in the
// repository's monitoring files.
var metricName = regexp.MustCompile(`\b(?:urlhash|go|process)_[a-z0-9_]*[a-z0-9]`)

// TestMonitoringNames: every metric the Grafana dashboard and the alert
// rules in monitoring/ use is one a server of an index directory exposes
// (a histogram's or a summary's by its _bucket, _sum or _count series), so
// that a renamed metric cannot leave a panel or an alert silently empty;
// and the dashboard is JSON whose panels each have a query.
func TestMonitoringNames(t *testing.T) {
	ts, _ := newDiskServer(t, nil)
	if status, _ := postAuth(t, ts, "/v1/urls/add", "https://example.com/\n"); status != 200 {
		t.Fatalf("urls/add: %d", status)
	}
	if status, _ := postAuth(t, ts, "/v1/nothing", ""); status != 404 { // a refusal
		t.Fatalf("POST /v1/nothing: %d", status)
	}
	exposed := map[string]bool{}
	for s := range scrape(t, ts) {
		name, _, _ := strings.Cut(s, "{")
		exposed[name] = true
		if base, ok := strings.CutSuffix(name, "_count"); ok {
			exposed[base] = true // a histogram or a summary, by its name
		}
	}
	for _, file := range []string{"grafana-dashboard.json", "alerts.yml"} {
		b, err := os.ReadFile(filepath.Join("..", "monitoring", file))
		if err != nil {
			t.Fatal(err)
		}
		names := metricName.FindAllString(string(b), -1)
		slices.Sort(names)
		names = slices.Compact(names)
		if len(names) < 5 {
			t.Fatalf("%s names %d metrics: %v", file, len(names), names)
		}
		for _, n := range names {
			if !exposed[n] {
				t.Errorf("%s uses %s, which /metrics does not expose", file, n)
			}
		}
		if file == "grafana-dashboard.json" {
			checkDashboard(t, b)
		}
	}
}

// checkDashboard checks a Grafana dashboard's JSON: a title and a uid,
// and a query in every panel that is not a row.
func checkDashboard(t *testing.T, b []byte) {
	t.Helper()
	var d struct {
		Title, UID string
		Panels     []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("grafana-dashboard.json: title %q, uid %q, %d panels", d.Title, d.UID, len(d.Panels))
	}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 || slices.ContainsFunc(p.Targets, func(q struct{ Expr string }) bool { return q.Expr == "" }) {
			t.Errorf("grafana-dashboard.json: panel %q has a missing or empty query", p.Title)
		}
	}
}
