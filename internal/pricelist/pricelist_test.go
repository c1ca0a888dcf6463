package pricelist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pricelist/pricetest"
)

// lister is a Lister of the test servers, its cache in a directory of the
// test's, its warnings collected, its clock set.
func lister(t *testing.T, o Options) (*Lister, *[]string) {
	t.Helper()
	var warnings []string
	if o.CacheDir == "" {
		o.CacheDir = t.TempDir()
	}
	o.Warn = func(w string) { warnings = append(warnings, w) }
	return New(o), &warnings
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*max(1, math.Abs(want)) }

func TestAzure(t *testing.T) {
	srv := pricetest.Azure(t, 4) // many pages: every NextPageLink is followed
	now := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	l, warnings := lister(t, Options{AzureURL: srv.URL, Now: func() time.Time { return now }})
	ctx := context.Background()

	p, err := l.Price(ctx, Query{Cloud: "azure", Service: "flexible-server", SKU: "Standard_D16ads_v5",
		Storage: "premium-ssd-v2:1TiB:51200iops:500mbps", Region: "eastus", HA: true})
	if err != nil {
		t.Fatal(err)
	}
	// Constructed eastus prices: 1.424/h whole server (the primary meter, not
	// the 9.99 one billed elsewhere), 0.0945/GiB-month, IOPS over 3000 at
	// 0.0055, MB/s over 125 at 0.0418; the standby doubles it all.
	want := 1.424*730 + 1024*0.0945 + (51200-3000)*0.0055 + (500-125)*0.0418
	if !near(p.ComputePerHour, 1.424) || p.StorageGB != 1024 || p.IOPS != 48200 || p.ThroughputMBps != 375 {
		t.Errorf("components %+v", p)
	}
	if !near(p.HAMonthly, want) || !near(p.Monthly(), 2*want) {
		t.Errorf("HA %v, monthly %v; want %v and %v", p.HAMonthly, p.Monthly(), want, 2*want)
	}
	if p.Currency != "USD" || p.Date != "2025-10-01" || p.Fetched != "2026-11-26T07:00:00Z" {
		t.Errorf("currency %q, date %q, fetched %q", p.Currency, p.Date, p.Fetched)
	}
	for _, s := range []string{"Azure Retail Prices API", "eastus", "General Purpose Dadsv5 Series Compute 16 vCore", "PMD V2 IOPS Provisioned IOPS", "standby"} {
		if !strings.Contains(p.Source, s) {
			t.Errorf("source %q lacks %q", p.Source, s)
		}
	}
	pages := srv.Requests.Load()
	if pages < 4 {
		t.Errorf("%d requests; the region's meters span several pages of 4", pages)
	}

	// Cached: the next lookups in the region make no request.
	p2, err := l.Price(ctx, Query{Cloud: "azure", SKU: "D32ds_v5", Storage: "512GiB", Region: "eastus"})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Requests.Load() != pages {
		t.Errorf("a cached region was fetched again")
	}
	if !near(p2.ComputePerHour, 2.848) || !near(p2.StoragePerGBMonth, 0.115) || p2.IOPS != 0 || p2.HAMonthly != 0 {
		t.Errorf("D32ds_v5 with 512 GiB of Premium SSD: %+v", p2)
	}
	// A per-vCore meter is multiplied by the vCores; Premium SSD IOPS
	// beyond what the size includes (2300 at 512 GiB) are provisioned.
	p3, err := l.Price(ctx, Query{Cloud: "azure", SKU: "Standard_D4s_v3", Storage: "512GiB:3000iops", Region: "eastus"})
	if err != nil {
		t.Fatal(err)
	}
	if !near(p3.ComputePerHour, 4*0.1265) || p3.IOPS != 700 || !near(p3.PerIOPSMonth, 0.05) || !strings.Contains(p3.Source, "x 4 vCores") {
		t.Errorf("D4s_v3 per vCore: %+v", p3)
	}
	if len(*warnings) != 0 {
		t.Errorf("warnings: %q", *warnings)
	}

	// The recorded westeurope page: B1MS and its Premium SSD storage.
	p4, err := l.Price(ctx, Query{Cloud: "azure", SKU: "Standard_B1ms", Storage: "128GiB", Region: "westeurope"})
	if err != nil {
		t.Fatal(err)
	}
	if !near(p4.Monthly(), 0.0199*730+128*0.1369) || p4.Date != "2021-12-01" {
		t.Errorf("westeurope B1ms: %v a month, date %s", p4.Monthly(), p4.Date)
	}
}

func TestAzureBadInput(t *testing.T) {
	srv := pricetest.Azure(t, 100)
	l, _ := lister(t, Options{AzureURL: srv.URL})
	ctx := context.Background()
	tests := []struct {
		q    Query
		want string
	}{
		{Query{Cloud: "azure", SKU: "Standard_D16ads_v6", Region: "eastus"},
			"no SKU Standard_D16ads_v6 for Azure Database for PostgreSQL flexible server in eastus; nearest: Standard_D16ads_v5, Standard_D16ds_v5, Standard_D2ads_v5"},
		{Query{Cloud: "azure", SKU: "Standard_D16ads_v5", Region: "eastsu"},
			"no prices for Azure Database for PostgreSQL in region eastsu; nearest: eastus, eastus2, westus"},
		{Query{Cloud: "azure", SKU: "Standard_D16ads_v5", Region: "East US"}, `region "East US" is not an Azure region name`},
		{Query{Cloud: "azure", Service: "single-server", SKU: "x", Region: "eastus"}, `unknown service "single-server"`},
		{Query{Cloud: "azure", SKU: "Standard_D16ads_v5", Storage: "ultra:1TiB", Region: "eastus"}, `storage type "ultra" is not one flexible server has`},
		{Query{Cloud: "azure", SKU: "Standard_D16ads_v5", Storage: "1TiB:500mbps", Region: "eastus"}, "premium-ssd has no provisioned throughput"},
		{Query{Cloud: "azure", SKU: "Standard_D16ads_v5", Storage: "gp3:gp2", Region: "eastus"}, "a second type"},
		{Query{Cloud: "azure", SKU: "Standard_D16ads_v5", Region: ""}, "no region; give one such as eastus"},
		{Query{Cloud: "oracle", Region: "x"}, `unknown cloud "oracle"`},
	}
	for _, tt := range tests {
		_, err := l.Price(ctx, tt.q)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.q, err, tt.want)
		}
	}
}

func TestAWS(t *testing.T) {
	srv := pricetest.AWS(t)
	regionFiles := &srv.Requests
	l, warnings := lister(t, Options{AWSURL: srv.URL})
	ctx := context.Background()
	p, err := l.Price(ctx, Query{Cloud: "aws", Engine: "postgres", Instance: "db.m6g.4xlarge",
		Storage: "gp3:1000GiB:15000iops:600mibps", HA: true, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	// Constructed: 1.232/h, gp3 0.115/GB-month, IOPS over 12,000 at 0.02 and
	// MiB/s over 500 at 0.08 (the baseline at 400 GiB and more); Multi-AZ
	// rows at twice each.
	single := 1.232*730 + 1000*0.115 + 3000*0.02 + 100*0.08
	if !near(p.ComputePerHour, 1.232) || p.IOPS != 3000 || p.ThroughputMBps != 100 || !near(p.HAMonthly, single) || !near(p.Monthly(), 2*single) {
		t.Errorf("price %+v: monthly %v, want %v", p, p.Monthly(), 2*single)
	}
	if p.Date != "2026-11-01" || !strings.Contains(p.Source, "version 20261101000000") || !strings.Contains(p.Source, "Multi-AZ: ") {
		t.Errorf("date %q, source %q", p.Date, p.Source)
	}
	if n := regionFiles.Load(); n != 1 {
		t.Fatalf("%d region files fetched", n)
	}

	for _, tt := range []struct {
		q       Query
		monthly float64
	}{
		{Query{Cloud: "aws", Instance: "db.m6g.4xlarge", Region: "us-east-1"}, 1.232 * 730},
		{Query{Cloud: "aws", Instance: "db.m6g.large", Storage: "gp3:100GiB:3000iops", Region: "us-east-1"}, 0.154*730 + 100*0.115},
		{Query{Cloud: "aws", Instance: "db.r6g.4xlarge", Storage: "io1:500GiB:20000iops", Region: "us-east-1"}, 1.792*730 + 500*0.125 + 20000*0.10},
		{Query{Cloud: "aws", Instance: "db.r6g.4xlarge", Storage: "io2:500GiB:20000iops", HA: true, Region: "us-east-1"}, 2 * (1.792*730 + 500*0.125 + 20000*0.10)},
		{Query{Cloud: "aws", Instance: "db.m6g.large", Storage: "gp2:200GiB", Region: "us-east-1"}, 0.154*730 + 200*0.115},
	} {
		p, err := l.Price(ctx, tt.q)
		if err != nil {
			t.Errorf("%s: %v", tt.q, err)
			continue
		}
		if !near(p.Monthly(), tt.monthly) {
			t.Errorf("%s: %v a month, want %v (%s)", tt.q, p.Monthly(), tt.monthly, p.Detail())
		}
	}
	if n := regionFiles.Load(); n != 1 {
		t.Errorf("the region file was fetched %d times; its extract is cached", n)
	}
	if len(*warnings) != 0 {
		t.Errorf("warnings: %q", *warnings)
	}

	for _, tt := range []struct {
		q    Query
		want string
	}{
		{Query{Cloud: "aws", Instance: "db.m6g.4xlarg", Region: "us-east-1"}, "no instance class db.m6g.4xlarg for Amazon RDS for PostgreSQL in us-east-1; nearest: db.m6g.4xlarge, db.m7g.4xlarge, db.r6g.4xlarge"},
		{Query{Cloud: "aws", Instance: "db.m6g.large", Region: "us-east-3"}, "no Amazon RDS prices for region us-east-3; nearest: us-east-1, us-east-2, us-west-2"},
		{Query{Cloud: "aws", Instance: "db.m4.large", Region: "us-west-2"}, "no PostgreSQL instances for Amazon RDS in us-west-2"},
		{Query{Cloud: "aws", Engine: "mysql", Instance: "db.m6g.large", Region: "us-east-1"}, `engine "mysql" is not PostgreSQL`},
		{Query{Cloud: "aws", Instance: "db.m6g.large", Storage: "io1:500GiB", Region: "us-east-1"}, "io1 storage needs its provisioned IOPS"},
		{Query{Cloud: "aws", Instance: "db.m6g.large", Storage: "gp2:500GiB:5000iops", Region: "us-east-1"}, "gp2 storage has no provisioned IOPS"},
		{Query{Cloud: "aws", Instance: "db.m6g.large", Storage: "st1:500GiB", Region: "us-east-1"}, `storage type "st1" is not one pgbakeoff prices`},
		{Query{Cloud: "aws", Instance: "db.m6g.large", Storage: "gp3", Region: "us-east-1"}, `has no size`},
		{Query{Cloud: "aws", Instance: "db.m6g.large", Storage: "gp3:100GiB:4000iops", Region: "us-east-1"}, "gp3 below 400 GiB comes with 3,000 IOPS and 125 MiB/s and RDS provisions no more"},
		{Query{Cloud: "aws", Instance: "db.m6g.large", Region: "US East"}, "not an AWS region code"},
	} {
		_, err := l.Price(ctx, tt.q)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.q, err, tt.want)
		}
	}
}

// The cache: used while fresh, refreshed when stale, fallen back to with a
// warning when the list cannot be reached, and alone with --offline.
func TestCache(t *testing.T) {
	srv := pricetest.Azure(t, 100)
	dir := t.TempDir()
	now := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	q := Query{Cloud: "azure", SKU: "Standard_D16ads_v5", Storage: "1TiB", Region: "eastus"}
	ctx := context.Background()

	offline, warnings := lister(t, Options{CacheDir: dir, Offline: true, AzureURL: srv.URL, Now: clock})
	if _, err := offline.Price(ctx, q); err == nil || !strings.Contains(err.Error(), "--offline, and Azure price list of Azure Database for PostgreSQL in eastus (USD) is not cached; look it up once without --offline") {
		t.Errorf("offline with nothing cached: %v", err)
	}
	if srv.Requests.Load() != 0 {
		t.Errorf("--offline made a request")
	}

	online, _ := lister(t, Options{CacheDir: dir, AzureURL: srv.URL, Now: clock})
	first, err := online.Price(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	fetches := srv.Requests.Load()

	// Ten days on the cache is stale. Offline it is used, with a warning.
	now = now.Add(10 * 24 * time.Hour)
	offline, warnings = lister(t, Options{CacheDir: dir, Offline: true, AzureURL: srv.URL, Now: clock})
	p, err := offline.Price(ctx, q)
	if err != nil || p.Monthly() != first.Monthly() || p.Fetched != "2026-11-26T07:00:00Z" {
		t.Fatalf("offline from a stale cache: %v, %v", p, err)
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "using the cached Azure price list of Azure Database for PostgreSQL in eastus (USD) (fetched 2026-11-26 07:00 UTC, 10 days ago), older than 7 days") {
		t.Errorf("warnings %q", *warnings)
	}
	if srv.Requests.Load() != fetches {
		t.Errorf("--offline made a request")
	}

	// Online, a stale cache and a list that is down: the cache, warned of.
	srv.Down.Store(true)
	online, warnings = lister(t, Options{CacheDir: dir, AzureURL: srv.URL, Now: clock})
	p, err = online.Price(ctx, q)
	if err != nil || p.Monthly() != first.Monthly() {
		t.Fatalf("fallback to the cache: %v, %v", p, err)
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "503 Service Unavailable") || !strings.Contains((*warnings)[0], "using the cached") {
		t.Errorf("warnings %q", *warnings)
	}
	// Down and nothing cached for the region: what failed, and that no cache is there.
	_, err = online.Price(ctx, Query{Cloud: "azure", SKU: "Standard_D16ads_v5", Region: "westus"})
	if err == nil || !strings.Contains(err.Error(), "503 Service Unavailable") || !strings.Contains(err.Error(), "no usable cached copy") {
		t.Errorf("down without a cache: %v", err)
	}
	// ... and once failed, not asked again for the next target in the region.
	requests0 := srv.Requests.Load()
	if _, err2 := online.Price(ctx, Query{Cloud: "azure", SKU: "Standard_D2ads_v5", Region: "westus"}); err2 == nil || err2.Error() != err.Error() || srv.Requests.Load() != requests0 {
		t.Errorf("the next target in a region that failed: %v, %d requests more", err2, srv.Requests.Load()-requests0)
	}

	// The list fallen back to serves the process's next lookups: it is not
	// fetched again for each target.
	requests := srv.Requests.Load()
	if _, err := online.Price(ctx, Query{Cloud: "azure", SKU: "Standard_D2ads_v5", Region: "eastus"}); err != nil || srv.Requests.Load() != requests {
		t.Errorf("a second lookup in the region: %v, %d requests more", err, srv.Requests.Load()-requests)
	}

	// Up again, the stale cache is refreshed by the next process.
	srv.Down.Store(false)
	online, _ = lister(t, Options{CacheDir: dir, AzureURL: srv.URL, Now: clock})
	p, err = online.Price(ctx, q)
	if err != nil || p.Fetched != now.Format(time.RFC3339) {
		t.Errorf("refreshed: fetched %q, %v", p.Fetched, err)
	}
}

// A list cut off in the middle of its answer is a failure to fetch, not a
// list that changed: the cache is fallen back to.
func TestCutOff(t *testing.T) {
	t.Run("dropped", func(t *testing.T) { cutOff(t, false) })
	t.Run("stalled", func(t *testing.T) {
		defer func(d time.Duration) { stallTimeout = d }(stallTimeout)
		stallTimeout = 300 * time.Millisecond
		cutOff(t, true)
	})
}

// cutOff checks the cache is fallen back to when the region's offer file is
// cut off: dropped half way, or stalled there.
func cutOff(t *testing.T, stall bool) {
	var cut atomic.Bool
	full, err := os.ReadFile(pricetest.Testdata("aws", "us-east-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	aws := pricetest.AWS(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cut.Load() || !strings.Contains(r.URL.Path, "/us-east-1/") {
			http.Redirect(w, r, aws.URL+r.URL.Path, http.StatusFound)
			return
		}
		// Half the file, then the connection drops or nothing more comes.
		w.Header().Set("Content-Length", strconv.Itoa(len(full)))
		w.Write(full[:len(full)/2])
		w.(http.Flusher).Flush()
		if stall {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	now := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	q := Query{Cloud: "aws", Instance: "db.m6g.large", Region: "us-east-1"}
	l, _ := lister(t, Options{CacheDir: dir, AWSURL: srv.URL, Now: func() time.Time { return now }})
	if _, err := l.Price(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	cut.Store(true)
	now = now.Add(30 * 24 * time.Hour)
	l, warnings := lister(t, Options{CacheDir: dir, AWSURL: srv.URL, Now: func() time.Time { return now }})
	p, err := l.Price(context.Background(), q)
	if err != nil || p.Fetched != "2026-11-26T07:00:00Z" {
		t.Fatalf("cut off with a stale cache: %v, %v", p, err)
	}
	failure := "unexpected EOF"
	if stall {
		failure = "nothing came for 300ms"
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], failure) || !strings.Contains((*warnings)[0], "using the cached AWS price list") || strings.Contains((*warnings)[0], "shape") {
		t.Errorf("warnings %q", *warnings)
	}
}

// A list whose shape changed is an error naming the field, never a zero
// price, and never covered by the cache.
func TestShapeChanged(t *testing.T) {
	answers := map[string]string{
		"Items[0].retailPrice":        `{"Items":[{"currencyCode":"USD","unitOfMeasure":"1 Hour","meterName":"vCore","productName":"p","skuName":"2 vCore","type":"Consumption","effectiveStartDate":"2024-01-01T00:00:00Z"}],"NextPageLink":null}`,
		"Items":                       `{"value":[],"NextPageLink":null}`,
		"retailPrice":                 `{"Items":[{"retailPrice":"0.5"}],"NextPageLink":null}`,
		"compute meter.unitOfMeasure": `{"Items":[{"currencyCode":"USD","retailPrice":1,"unitOfMeasure":"1 Day","meterName":"vCore","productName":"Azure Database for PostgreSQL Flexible Server General Purpose Ddsv5 Series Compute","skuName":"2 vCore","armSkuName":"Standard_D2ds_v5","type":"Consumption","effectiveStartDate":"2024-01-01T00:00:00Z"}],"NextPageLink":null}`,
		"NextPageLink":                `{"Items":[],"NextPageLink":"https://elsewhere.example/prices?page=2"}`,
	}
	free := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"Items":[{"currencyCode":"USD","retailPrice":0,"unitOfMeasure":"1 Hour","meterName":"vCore","productName":"Azure Database for PostgreSQL Flexible Server General Purpose Ddsv5 Series Compute","skuName":"2 vCore","armSkuName":"Standard_D2ds_v5","type":"Consumption","effectiveStartDate":"2024-01-01T00:00:00Z"}],"NextPageLink":null}`)
	}))
	defer free.Close()
	l, _ := lister(t, Options{AzureURL: free.URL})
	if _, err := l.Price(context.Background(), Query{Cloud: "azure", SKU: "Standard_D2ds_v5", Region: "eastus"}); err == nil || !strings.Contains(err.Error(), "prices the compute at 0; no price is made of it") {
		t.Errorf("compute at 0: %v", err)
	}
	for field, body := range answers {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		l, _ := lister(t, Options{AzureURL: srv.URL})
		_, err := l.Price(context.Background(), Query{Cloud: "azure", SKU: "Standard_D2ds_v5", Region: "eastus"})
		var shape *ShapeError
		if !errors.As(err, &shape) || !strings.Contains(shape.Field, field) || !strings.Contains(err.Error(), "shape may have changed") {
			t.Errorf("%s: error %v", field, err)
		}
		srv.Close()
	}

	// An AWS offer file without terms, and one cut short.
	us, err := os.ReadFile(pricetest.Testdata("aws", "us-east-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	json.Unmarshal(us, &doc)
	delete(doc, "terms")
	noTerms, _ := json.Marshal(doc)
	if _, err := readAWSOffer(strings.NewReader(string(noTerms))); err == nil || !strings.Contains(err.Error(), "terms is missing") {
		t.Errorf("no terms: %v", err)
	}
	if _, err := readAWSOffer(strings.NewReader(string(us[:len(us)/2]))); err == nil || !strings.Contains(err.Error(), "ended early") {
		t.Errorf("cut short: %v", err)
	}
	// Terms before products, and OnDemand renamed.
	var ordered map[string]json.RawMessage
	json.Unmarshal(us, &ordered)
	termsFirst := fmt.Sprintf(`{"version":"1","terms":%s,"products":%s}`, ordered["terms"], ordered["products"])
	if _, err := readAWSOffer(strings.NewReader(termsFirst)); err == nil || !strings.Contains(err.Error(), "terms comes before products") {
		t.Errorf("terms first: %v", err)
	}
	renamed := strings.Replace(string(us), `"OnDemand"`, `"OnDemandV2"`, 1)
	if _, err := readAWSOffer(strings.NewReader(renamed)); err == nil || !strings.Contains(err.Error(), "terms.OnDemand prices none of the 24 PostgreSQL products") {
		t.Errorf("OnDemand renamed: %v", err)
	}
	// A product priced at 0.
	zero := strings.Replace(string(us), `"USD": "1.2320000000"`, `"USD": "0.0000000000"`, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/us-east-1/") {
			fmt.Fprint(w, zero)
			return
		}
		f := "region_index.json"
		if r.URL.Path == "/offers/v1.0/aws/index.json" {
			f = "index.json"
		}
		http.ServeFile(w, r, pricetest.Testdata("aws", f))
	}))
	defer srv.Close()
	zl, _ := lister(t, Options{AWSURL: srv.URL})
	if _, err := zl.Price(context.Background(), Query{Cloud: "aws", Instance: "db.m6g.4xlarge", Region: "us-east-1"}); err == nil || !strings.Contains(err.Error(), "prices instance db.m6g.4xlarge at 0") {
		t.Errorf("an instance at 0: %v", err)
	}
	x, err := readAWSOffer(strings.NewReader(string(us)))
	if err != nil {
		t.Fatal(err)
	}
	// Kept: PostgreSQL's instances, Single-AZ and Multi-AZ, and the storage,
	// IOPS and throughput rows; not MySQL, the DB cluster, snapshots or
	// Reserved terms.
	if len(x.Rows) != 8+8*2 || slices.ContainsFunc(x.Rows, func(r awsRow) bool { return r.Price == 5400 || r.Price == 1.216 || r.Price == 2.957 }) {
		t.Errorf("%d rows kept: %+v", len(x.Rows), x.Rows)
	}
}

// Cloud SQL with a Cloud Billing API key: the key reaches Google alone, and
// no message, price or cache file holds it.
func TestGCP(t *testing.T) {
	const key = "AIzaTESTKEY-do-not-leak-0123456789"
	srv := pricetest.GCP(t, key)
	dir := t.TempDir()
	ctx := context.Background()

	none, _ := lister(t, Options{CacheDir: dir, GCPURL: srv.URL})
	if _, err := none.Price(ctx, Query{Cloud: "gcp", SKU: "db-custom-16-65536", Region: "us-central1"}); err == nil || !strings.Contains(err.Error(), "give the price by hand") || !strings.Contains(err.Error(), GCPKeyEnv) {
		t.Errorf("no key: %v", err)
	}
	wrong, _ := lister(t, Options{CacheDir: dir, GCPURL: srv.URL, GCPKey: "AIzaWRONG-secret"})
	_, err := wrong.Price(ctx, Query{Cloud: "gcp", SKU: "db-custom-16-65536", Region: "us-central1"})
	if err == nil || !strings.Contains(err.Error(), "403 Forbidden") || strings.Contains(err.Error(), "AIzaWRONG") || !strings.Contains(err.Error(), "key=REDACTED") {
		t.Errorf("a wrong key: %v", err)
	}

	l, _ := lister(t, Options{CacheDir: dir, GCPURL: srv.URL, GCPKey: key})
	p, err := l.Price(ctx, Query{Cloud: "gcp", SKU: "db-custom-16-65536", Storage: "ssd:1000GiB", HA: true, Region: "us-central1"})
	if err != nil {
		t.Fatal(err)
	}
	zonal := (16*0.0413+64*0.007)*730 + 1000*0.17
	if !near(p.ComputePerHour, 16*0.0413+64*0.007) || !near(p.HAMonthly, zonal) || !near(p.Monthly(), 2*zonal) {
		t.Errorf("price %+v, monthly %v, want %v", p, p.Monthly(), 2*zonal)
	}
	if srv.Requests.Load() != 3 || p.Date != "2026-10-01" || !strings.Contains(p.Source, "Cloud SQL for PostgreSQL: Regional - vCPU in Americas") {
		t.Errorf("%d pages, date %q, source %q", srv.Requests.Load(), p.Date, p.Source)
	}
	// A region's own SKU over its continent's; two as near that disagree are
	// not guessed between.
	if p, err := l.Price(ctx, Query{Cloud: "gcp", SKU: "db-custom-16-65536", Region: "us-west1"}); err != nil || !near(p.ComputePerHour, 16*0.045+64*0.007) ||
		!strings.Contains(p.Source, "Zonal - vCPU in Oregon") || !strings.Contains(p.Source, "Zonal - RAM in Americas") {
		t.Errorf("a region's own SKU: %+v, %v", p, err)
	}
	if _, err := l.Price(ctx, Query{Cloud: "gcp", SKU: "db-custom-16-65536", Region: "us-east1"}); err == nil ||
		!strings.Contains(err.Error(), "both price vCPU in us-east1, differently") || !strings.Contains(err.Error(), "South Carolina, again") {
		t.Errorf("two SKUs of one region that disagree: %v", err)
	}
	if _, err := l.Price(ctx, Query{Cloud: "gcp", SKU: "db-custom-4-16384", Region: "us-centrl1"}); err == nil || !strings.Contains(err.Error(), "nearest: us-central1") {
		t.Errorf("a misspelt region: %v", err)
	}
	if _, err := l.Price(ctx, Query{Cloud: "gcp", SKU: "db-f1-micro", Region: "us-central1"}); err == nil || !strings.Contains(err.Error(), "not a custom machine tier") {
		t.Errorf("a shared-core tier: %v", err)
	}
	// The cache serves a lookup without a key, as --offline does.
	keyless, _ := lister(t, Options{CacheDir: dir, GCPURL: srv.URL, Offline: true})
	if p2, err := keyless.Price(ctx, Query{Cloud: "gcp", SKU: "db-custom-16-65536", Storage: "ssd:1000GiB", HA: true, Region: "us-central1"}); err != nil || p2.Monthly() != p.Monthly() {
		t.Errorf("offline without a key: %v, %v", p2, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 1 {
		t.Errorf("cache files %v", files)
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if strings.Contains(string(data), key) {
			t.Errorf("the cache file %s holds the key", f)
		}
	}
	if strings.Contains(fmt.Sprint(p), key) {
		t.Errorf("the price holds the key")
	}
}

// A price server whose error answer repeats the request, key and all: the
// message quotes the answer without the key, as sent or unescaped.
func TestErrorAnswerHidesKey(t *testing.T) {
	const key = "AIza+echoed/key=0123"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error": {"message": "bad request %s (key %s)"}}`, r.URL.String(), r.URL.Query().Get("key"))
	}))
	defer srv.Close()
	l, _ := lister(t, Options{CacheDir: t.TempDir(), GCPURL: srv.URL, GCPKey: key})
	_, err := l.Price(context.Background(), Query{Cloud: "gcp", SKU: "db-custom-16-65536", Region: "us-central1"})
	if err == nil || !strings.Contains(err.Error(), "400 Bad Request") || !strings.Contains(err.Error(), "bad request") {
		t.Fatalf("an error answer: %v, want the status and the answer", err)
	}
	for _, k := range []string{key, url.QueryEscape(key), "AIza"} {
		if strings.Contains(err.Error(), k) {
			t.Errorf("the message holds the key as %q: %v", k, err)
		}
	}
}
