// Command pricelist measures reading an AWS region offer file for RDS as
// pgbakeoff streams it: a file of -mb megabytes in the bulk files' shape
// (the constructed us-east-1 fixture's PostgreSQL products among many
// products of other engines, each with OnDemand and Reserved terms), served
// over local HTTP. It prints the medians over -rounds of the time to the
// price, the rate, the peak heap while reading, and the size of the extract
// that is cached.
//
//	go run ./bench/pricelist
//	go run ./bench/pricelist -mb 800 -rounds 5
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/pgbakeoff/pgbakeoff/bench/internal/benchkit"
	"github.com/pgbakeoff/pgbakeoff/internal/pricelist"
	"github.com/pgbakeoff/pgbakeoff/internal/pricelist/pricetest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	mb := flag.Int("mb", 400, "size of the offer file, in megabytes")
	rounds := flag.Int("rounds", 3, "lookups, each with an empty cache")
	flag.Parse()
	dir, err := os.MkdirTemp("", "pgbakeoff-pricelist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	offer := filepath.Join(dir, "us-east-1.json")
	size, err := writeOffer(offer, int64(*mb)<<20)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/offers/v1.0/aws/index.json":
			http.ServeFile(w, r, pricetest.Testdata("aws", "index.json"))
		case "/offers/v1.0/aws/AmazonRDS/current/region_index.json":
			http.ServeFile(w, r, pricetest.Testdata("aws", "region_index.json"))
		case "/offers/v1.0/aws/AmazonRDS/20261101000000/us-east-1/index.json":
			http.ServeFile(w, r, offer)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	var times, peaks []float64
	var cached int64
	for i := range *rounds {
		cache := filepath.Join(dir, fmt.Sprintf("cache-%d", i))
		l := pricelist.New(pricelist.Options{AWSURL: srv.URL, CacheDir: cache})
		runtime.GC()
		peak, stop := watchHeap()
		start := time.Now()
		p, err := l.Price(context.Background(), pricelist.Query{Cloud: "aws", Instance: "db.m6g.4xlarge",
			Storage: "gp3:1000GiB:15000iops", HA: true, Region: "us-east-1"})
		elapsed := time.Since(start)
		stop()
		if err != nil {
			return err
		}
		if p.ComputePerHour != 1.232 {
			return fmt.Errorf("priced %v/h, want the fixture's 1.232", p.ComputePerHour)
		}
		times = append(times, elapsed.Seconds())
		peaks = append(peaks, float64(peak.Load())/(1<<20))
		files, _ := filepath.Glob(filepath.Join(cache, "*.json"))
		for _, f := range files {
			if st, err := os.Stat(f); err == nil {
				cached = st.Size()
			}
		}
	}
	t, h := benchkit.Median(times), benchkit.Median(peaks)
	fmt.Printf("offer file %.0f MB: %.2f s to the price (%.0f MB/s), peak heap %.1f MiB, extract cached %.1f KiB (medians of %d)\n",
		float64(size)/1e6, t, float64(size)/1e6/t, h, float64(cached)/1024, *rounds)
	return nil
}

// watchHeap samples the heap in use until stopped, keeping its peak.
func watchHeap() (*atomic.Uint64, func()) {
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return &peak, func() { close(done); <-stopped }
}

// writeOffer writes an offer file of about size bytes: the fixture's
// products and terms, then products of other engines until the size is
// reached, each with an OnDemand and a Reserved term.
func writeOffer(path string, size int64) (int64, error) {
	data, err := os.ReadFile(pricetest.Testdata("aws", "us-east-1.json"))
	if err != nil {
		return 0, err
	}
	var fixture struct {
		Products map[string]json.RawMessage            `json:"products"`
		Terms    map[string]map[string]json.RawMessage `json:"terms"`
	}
	if err := json.Unmarshal(data, &fixture); err != nil {
		return 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprint(w, `{"formatVersion":"v1.0","disclaimer":"generated","offerCode":"AmazonRDS","version":"20261101000000","publicationDate":"2026-11-01T00:00:00Z","products":{`)
	first := true
	sep := func() {
		if !first {
			w.WriteString(",")
		}
		first = false
	}
	for sku, p := range fixture.Products {
		sep()
		fmt.Fprintf(w, "%q:%s", sku, p)
	}
	// Other engines' instances, as many as make the size: products take about
	// a third of a real file, terms the rest.
	engines := []string{"MySQL", "MariaDB", "Oracle", "SQL Server", "Aurora MySQL", "Aurora PostgreSQL"}
	var n int
	for int64(w.Buffered())+fileSize(f) < size/3 {
		n++
		sep()
		fmt.Fprintf(w, `"GEN%012d":{"sku":"GEN%012d","productFamily":"Database Instance","attributes":{"servicecode":"AmazonRDS","location":"US East (N. Virginia)","locationType":"AWS Region","instanceType":"db.x%d.%dxlarge","currentGeneration":"Yes","instanceFamily":"General purpose","vcpu":"%d","physicalProcessor":"AWS Graviton2","memory":"%d GiB","storage":"EBS Only","networkPerformance":"Up to 10 Gigabit","processorArchitecture":"64-bit","engineCode":"%d","databaseEngine":%q,"licenseModel":"License included","deploymentOption":"Single-AZ","usagetype":"USE1-InstanceUsage:db.x%d","operation":"CreateDBInstance:00%02d","dedicatedEbsThroughput":"4750 Mbps","enhancedNetworkingSupported":"Yes","processorFeatures":"AWS Graviton2","regionCode":"us-east-1"}}`,
			n, n, n%9, n%32, n%64, n%512, n%30, engines[n%len(engines)], n, n%99)
	}
	w.WriteString(`},"terms":{"OnDemand":{`)
	first = true
	for sku, t := range fixture.Terms["OnDemand"] {
		sep()
		fmt.Fprintf(w, "%q:%s", sku, t)
	}
	term := func(sku string, i int, code, desc string) {
		fmt.Fprintf(w, `%q:{"%s.%s":{"offerTermCode":%q,"sku":%q,"effectiveDate":"2026-11-01T00:00:00Z","priceDimensions":{"%s.%s.6YS6EN2CT7":{"rateCode":"%s.%s.6YS6EN2CT7","description":%q,"beginRange":"0","endRange":"Inf","unit":"Hrs","pricePerUnit":{"USD":"%d.%03d0000000"},"appliesTo":[]}},"termAttributes":{}}}`,
			sku, sku, code, code, sku, sku, code, sku, code, desc, i%20, i%1000)
	}
	for i := 1; i <= n; i++ {
		sep()
		term(fmt.Sprintf("GEN%012d", i), i, "JRTCKXETXF", "USD per instance hour (or partial hour) of a generated product")
	}
	w.WriteString(`},"Reserved":{`)
	first = true
	for i := 1; int64(w.Buffered())+fileSize(f) < size; i++ {
		sep()
		term(fmt.Sprintf("GEN%012d", (i-1)%n+1), i, fmt.Sprintf("R%09d", i), "Reserved instance hour of a generated product, 1yr, No Upfront")
	}
	w.WriteString(`}},"attributesList":{}}`)
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return fileSize(f), nil
}

func fileSize(f *os.File) int64 {
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}
