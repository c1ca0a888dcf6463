// Package pricetest serves the recorded and constructed price list answers
// of ../testdata over HTTP, as the clouds serve their lists, so that tests
// run the same client code as against the live lists:
//
//	az := pricetest.Azure(t, 4)  // four items a page: every NextPageLink is followed
//	l := pricelist.New(pricelist.Options{AzureURL: az.URL, CacheDir: t.TempDir()})
package pricetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// Testdata is the path of a file of the fixtures.
func Testdata(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), "..", "testdata"}, parts...)...)
}

// Server is a price list served for a test.
type Server struct {
	*httptest.Server
	URL      string       // the list's address, as Options takes it
	Requests atomic.Int64 // answered with a list
	Down     atomic.Bool  // answer 503, as a list that cannot be reached
}

func serve(t testing.TB, s *Server, h http.HandlerFunc) {
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Down.Load() {
			http.Error(w, "service unavailable", http.StatusServiceUnavailable)
			return
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
}

// Azure serves the Azure fixtures as the Retail Prices API does: the items
// its $filter's "eq" terms select, pageSize to a page, each page naming the
// next with an absolute NextPageLink.
func Azure(t testing.TB, pageSize int) *Server {
	t.Helper()
	var items []map[string]any
	for _, f := range []string{"constructed.json", "westeurope.ace.json"} {
		data, err := os.ReadFile(Testdata("azure", f))
		if err != nil {
			t.Fatal(err)
		}
		var page struct{ Items []map[string]any }
		if err := json.Unmarshal(data, &page); err != nil {
			t.Fatal(err)
		}
		items = append(items, page.Items...)
	}
	s := &Server{}
	eq := regexp.MustCompile(`(\w+) eq '([^']*)'`)
	serve(t, s, func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		q := r.URL.Query()
		if q.Get("currencyCode") != "'USD'" {
			http.Error(w, "only USD here", http.StatusBadRequest)
			return
		}
		sel := []map[string]any{}
	items:
		for _, it := range items {
			for _, m := range eq.FindAllStringSubmatch(q.Get("$filter"), -1) {
				field := m[1]
				if field == "priceType" {
					field = "type"
				}
				if fmt.Sprint(it[field]) != m[2] {
					continue items
				}
			}
			sel = append(sel, it)
		}
		skip, _ := strconv.Atoi(q.Get("$skip"))
		from, end := min(skip, len(sel)), min(skip+pageSize, len(sel))
		page := map[string]any{"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
			"Items": sel[from:end], "Count": end - from, "NextPageLink": nil}
		if end < len(sel) {
			q.Set("$skip", strconv.Itoa(end))
			page["NextPageLink"] = s.Server.URL + r.URL.Path + "?" + q.Encode()
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(page)
	})
	s.URL = s.Server.URL + "/api/retail/prices"
	return s
}

// AWS serves the AWS fixtures at the bulk API's paths; Requests counts the
// region offer files served.
func AWS(t testing.TB) *Server {
	t.Helper()
	files := map[string]string{
		"/offers/v1.0/aws/index.json":                                    "index.json",
		"/offers/v1.0/aws/AmazonRDS/current/region_index.json":           "region_index.json",
		"/offers/v1.0/aws/AmazonRDS/20261101000000/us-east-1/index.json": "us-east-1.json",
		"/offers/v1.0/aws/AmazonRDS/20170419200300/us-west-2/index.json": "us-west-2.lyft.json",
	}
	s := &Server{}
	serve(t, s, func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.Contains(r.URL.Path, "/AmazonRDS/2") {
			s.Requests.Add(1)
		}
		http.ServeFile(w, r, Testdata("aws", f))
	})
	s.URL = s.Server.URL
	return s
}

// GCP serves Cloud SQL's SKUs as the Cloud Billing Catalog does, to the
// holder of key alone: the constructed page, then the recorded one, then an
// empty last page.
func GCP(t testing.TB, key string) *Server {
	t.Helper()
	s := &Server{}
	serve(t, s, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/services/9662-B51E-5089/skus" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("key") != key {
			http.Error(w, `{"error":{"code":403,"message":"API key not valid"}}`, http.StatusForbidden)
			return
		}
		s.Requests.Add(1)
		f := "cloudsql.json"
		switch tok := r.URL.Query().Get("pageToken"); {
		case tok == "page-2":
			f = "compute-engine.opencost.json"
		case tok != "":
			fmt.Fprint(w, `{"skus": []}`) // the recorded page's own next page, the last
			return
		}
		http.ServeFile(w, r, Testdata("gcp", f))
	})
	s.URL = s.Server.URL
	return s
}
