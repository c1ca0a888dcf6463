package kubernetes_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/metrics"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/common/expfmt"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestPodMonitor: the PodMonitor selects the Job's pods and scrapes the port
// their pgbakeoff serves its metrics on.
func TestPodMonitor(t *testing.T) {
	var pm monitoringv1.PodMonitor
	decode(t, "podmonitor.yaml", &pm)
	var job batchv1.Job
	decode(t, "tpcc-indexed-job.yaml", &job)
	if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" {
		t.Fatalf("kind: %s %s", pm.APIVersion, pm.Kind)
	}
	pod := job.Spec.Template
	for k, v := range pm.Spec.Selector.MatchLabels {
		if pod.Labels[k] != v {
			t.Errorf("the PodMonitor selects %s=%s, which the Job's pods lack: %v", k, v, pod.Labels)
		}
	}
	if len(pm.Spec.Selector.MatchLabels) == 0 {
		t.Error("the PodMonitor selects every pod")
	}
	c := pod.Spec.Containers[0]
	i := slices.IndexFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--metrics-listen=") })
	if i < 0 {
		t.Fatalf("the Job's pgbakeoff serves no metrics: %v", c.Args)
	}
	listen := strings.TrimPrefix(c.Args[i], "--metrics-listen=")
	if len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("%d endpoints, want 1", len(pm.Spec.PodMetricsEndpoints))
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	if ep.Path != metrics.Path {
		t.Errorf("path %q, want %q", ep.Path, metrics.Path)
	}
	port := slices.IndexFunc(c.Ports, func(p corev1.ContainerPort) bool { return ep.Port != nil && p.Name == *ep.Port })
	if port < 0 || ":"+strconv.Itoa(int(c.Ports[port].ContainerPort)) != listen {
		t.Errorf("the PodMonitor scrapes port %v; the container's ports are %+v and pgbakeoff listens on %s", ep.Port, c.Ports, listen)
	}
}

// TestDashboard: the Grafana dashboard parses, and every metric its queries
// name is one pgbakeoff serves.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("../grafana/pgbakeoff-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("the dashboard does not parse: %v", err)
	}
	served := servedNames(t)
	var exprs []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			exprs = append(exprs, q.Expr)
		}
	}
	for _, v := range d.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	metricName := regexp.MustCompile(`\b(pgbakeoff|process)_[a-z_]+\b`)
	seen := 0
	for _, e := range exprs {
		for _, name := range metricName.FindAllString(e, -1) {
			seen++
			if !served[name] {
				t.Errorf("the dashboard queries %s, which pgbakeoff does not serve: %s", name, e)
			}
		}
	}
	if seen < 10 {
		t.Errorf("the dashboard names %d metrics; want its panels to query pgbakeoff's", seen)
	}
}

// servedNames are the series names pgbakeoff serves: the figures it describes
// (a histogram's as its series), and those of a real endpoint's scrape.
func servedNames(t *testing.T) map[string]bool {
	served := map[string]bool{}
	for _, n := range metrics.Names() {
		served[n] = true
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			served[n+s] = true
		}
	}
	srv, err := metrics.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get("http://" + srv.Addr() + metrics.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for n := range fams {
		served[n] = true
	}
	if !served["process_cpu_seconds_total"] {
		t.Errorf("the endpoint serves no process_cpu_seconds_total:\n%s", body)
	}
	return served
}
