package study

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
	"github.com/pgbakeoff/pgbakeoff/internal/pricelist"
)

func TestLoadPriceForms(t *testing.T) {
	s, err := Load("testdata/priced.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Prices != "testdata/prices.yaml" {
		t.Errorf("Prices = %q, want testdata/prices.yaml (the study's prices: from its directory)", s.Prices)
	}
	tests := []struct {
		target string
		want   *cost.Price
		ref    string
	}{
		{"total", &cost.Price{Total: 1234.5, Currency: "EUR", Source: "a quote", Date: "2025-03"}, ""},
		{"components", &cost.Price{
			ComputePerHour: 0.34,
			StorageGB:      512, StoragePerGBMonth: 0.115,
			IOPS: 3000, PerIOPSMonth: 0.005,
			ThroughputMBps: 125, PerMBpsMonth: 0.04,
			HA:       2,
			BackupGB: 100, BackupPerGBMonth: 0.095,
			NetworkMonthly: 20,
			FeeMonthly:     50, FeePercent: 10,
			Currency: "USD",
		}, ""},
		{"ref", &cost.Price{
			ComputePerHour: 0.34, StorageGB: 512, StoragePerGBMonth: 0.115, HA: 2,
			Currency: "USD", Source: "a made-up price for tests", Date: "2024-01",
		}, "small"},
		{"unpriced", nil, ""},
		{"lookup-ref", nil, "rds"},
	}
	for i, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			got := s.Targets[i]
			if got.Name != tt.target {
				t.Fatalf("target %d is %q", i, got.Name)
			}
			if !reflect.DeepEqual(got.Price, tt.want) {
				t.Errorf("Price:\n got %+v\nwant %+v", got.Price, tt.want)
			}
			if got.PriceRef != tt.ref {
				t.Errorf("PriceRef = %q, want %q", got.PriceRef, tt.ref)
			}
			// A prices file's entry may be a lookup in a cloud's list too.
			wantLookup := tt.target == "lookup-ref"
			if (got.PriceLookup != nil) != wantLookup || wantLookup && *got.PriceLookup !=
				(pricelist.Query{Cloud: "aws", Instance: "db.m6g.large", Storage: "gp3:100GiB", HA: true, Region: "us-east-1"}) {
				t.Errorf("PriceLookup = %+v", got.PriceLookup)
			}
		})
	}
}

// priced is a study whose one target has the price given, at line 1, column 44.
func priced(price string) string {
	return "targets: [{name: a, dsn: \"host=db\", price: " + price + "}]\nworkloads: [{kind: tpcb}]\n"
}

func TestParsePriceErrors(t *testing.T) {
	tests := []struct {
		name string
		file string // x.yaml when empty
		yaml string
		want []string
	}{
		// Inline prices: each problem at the key or value it is about.
		{"not a mapping", "", priced("0.68"), []string{
			`x.yaml:1:44: price must be a mapping like {monthly: 1234.5}, {compute_per_hour: 0.68, storage_gb: 512, storage_per_gb_month: 0.115}, {ref: name} or {cloud: aws, instance: db.m6g.large, region: us-east-1}, not 0.68`}},
		{"monthly with components", "", priced("{monthly: 100, compute_per_hour: 1}"), []string{
			`x.yaml:1:54: monthly is the whole month; give it or components such as compute_per_hour, not both`}},
		{"quantity without unit price", "", priced("{compute_per_hour: 1, storage_gb: 512}"), []string{
			`x.yaml:1:78: storage_gb needs storage_per_gb_month`}},
		{"storage twice", "", priced("{storage_monthly: 5, storage_gb: 1, storage_per_gb_month: 1}"), []string{
			`x.yaml:1:62: give storage_gb with storage_per_gb_month, or storage_monthly, not both`}},
		{"negative", "", priced("{storage_gb: -5, storage_per_gb_month: 1}"), []string{
			`x.yaml:1:57: storage_gb -5 is out of range; want more than 0`}},
		{"not a number", "", priced(`{monthly: "1,788.608"}`), []string{
			`x.yaml:1:54: monthly must be a number, not "1,788.608"`}},
		{"HA below 1", "", priced("{compute_per_hour: 1, ha: 0.5}"), []string{
			`x.yaml:1:70: ha 0.5 is out of range; want 1 or more, such as 2 for one standby`}},
		{"per_hour and compute_per_hour", "", priced("{per_hour: 1, compute_per_hour: 1}"), []string{
			`x.yaml:1:58: per_hour and compute_per_hour are the same; give one`}},
		{"unknown key", "", priced("{monthly: 5, curency: EUR}"), []string{
			`x.yaml:1:57: unknown key "curency" in price of target "a"; did you mean "currency"?`}},
		{"date", "", priced("{monthly: 5, date: Jan 2024}"), []string{
			`x.yaml:1:63: invalid date "Jan 2024"; want YYYY, YYYY-MM or YYYY-MM-DD`}},
		{"empty", "", priced("{source: a quote}"), []string{
			`x.yaml:1:44: price of target "a": the price has no amounts; give monthly, or components such as compute_per_hour`}},

		// Lookups in a cloud's price list: keys of the cloud, values checked.
		{"lookup: unknown cloud", "", priced("{cloud: azur, sku: x, region: eastus}"), []string{
			`x.yaml:1:52: unknown cloud "azur"; did you mean "azure"?`}},
		{"lookup: key of another cloud", "", priced("{cloud: aws, sku: Standard_D2ds_v5, instance: db.m6g.large, region: us-east-1}"), []string{
			`x.yaml:1:57: unknown key "sku" in price of target "a" (cloud aws); want cloud, engine, instance, storage, multi_az or region`}},
		{"lookup: missing keys", "", priced("{cloud: azure, storage: 1TiB}"), []string{
			`x.yaml:1:44: price of target "a" looks the price up in azure's list and needs sku`,
			`x.yaml:1:44: price of target "a" looks the price up in azure's list and needs region`}},
		{"lookup: bad storage", "", priced(`{cloud: aws, instance: db.m6g.large, storage: "gp3:big", region: us-east-1}`), []string{
			`x.yaml:1:90: storage "gp3:big": "big" is a second type or empty; give one type, a size, and optionally IOPS and throughput`}},
		{"lookup: engine", "", priced("{cloud: aws, engine: mysql, instance: db.m6g.large, region: us-east-1}"), []string{
			`x.yaml:1:65: engine "mysql" is not PostgreSQL; pgbakeoff prices RDS for PostgreSQL (engine: postgres)`}},
		{"lookup: multi_az not a bool", "", priced("{cloud: aws, instance: db.m6g.large, multi_az: 2, region: us-east-1}"), []string{
			`x.yaml:1:91: multi_az must be true or false, not 2`}},

		// Refs.
		{"ref without prices file", "", priced("{ref: small}"), []string{
			`x.yaml:1:50: price ref "small" needs a prices file; add prices: with its path, such as ../prices/seed-reports.yaml, at the top of the study`}},
		{"ref beside amounts", "testdata/x.yaml", "prices: prices.yaml\n" + priced("{ref: small, monthly: 5}"), []string{
			`testdata/x.yaml:2:57: price of target "a" has a ref; give monthly in the prices file, not beside the ref`}},
		{"ref not in the file", "testdata/x.yaml", "prices: prices.yaml\n" + priced("{ref: azure-flexible-d4ds-v5}"), []string{
			`testdata/x.yaml:2:50: price ref "azure-flexible-d4ds-v5" is not in testdata/prices.yaml; did you mean "azure-flexible-d16ads-v5"?`}},
		{"ref without suggestion", "testdata/x.yaml", "prices: prices.yaml\n" + priced("{ref: large}"), []string{
			`testdata/x.yaml:2:50: price ref "large" is not in testdata/prices.yaml; it has azure-flexible-d16ads-v5, eur, rds or small`}},
		{"ref empty", "testdata/x.yaml", "prices: prices.yaml\n" + priced("{ref: }"), []string{
			`testdata/x.yaml:2:45: ref must be a string, not empty`}},
		{"prices file missing", "testdata/x.yaml", "prices: no-such.yaml\n" + priced("{ref: small}"), []string{
			`testdata/x.yaml:1:9: cannot read the prices file: open testdata/no-such.yaml: no such file or directory`}},
		{"prices not a path", "", "prices: [a]\n" + priced("{ref: small}"), []string{
			`x.yaml:1:9: prices must be a string, not a list`}},
		{"prices file broken", "testdata/x.yaml", "prices: prices-broken.yaml\n" + priced("{ref: small}"), []string{
			`testdata/prices-broken.yaml:4:5: unknown key "storge_gb" in price "small"; did you mean "storage_gb"?`}},
		{"prices key misspelt", "", "price: prices.yaml\n" + priced("{ref: small}"), []string{
			`x.yaml:1:1: unknown key "price" in the study; did you mean "prices"?`,
			`x.yaml:2:50: price ref "small" needs a prices file; add prices: with its path, such as ../prices/seed-reports.yaml, at the top of the study`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := cmpOr(tt.file, "x.yaml")
			s, err := Parse(file, []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded, want %q", tt.want)
			}
			if s != nil {
				t.Errorf("Parse returned a study with its error")
			}
			if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// A target's price can be a lookup in its cloud's price list, which is
// kept as the query to make, not a price.
func TestParsePriceLookup(t *testing.T) {
	s := mustParse(t, `name: clouds
targets:
  - name: azure
    dsn: host=a
    price: {cloud: azure, sku: Standard_D16ads_v5, storage: "premium-ssd-v2:1TiB:51200iops", ha: true, region: eastus}
  - name: rds
    dsn: host=b
    price: {cloud: aws, engine: postgres, instance: db.m6g.4xlarge, storage: "gp3:1000GiB:12000iops", multi_az: true, region: us-east-1}
  - name: cloudsql
    dsn: host=c
    price: {cloud: gcp, tier: db-custom-16-65536, storage: "ssd:1000GiB", region: us-central1}
workloads:
  - kind: tpcb
    clients: [1]
`)
	want := []pricelist.Query{
		{Cloud: "azure", SKU: "Standard_D16ads_v5", Storage: "premium-ssd-v2:1TiB:51200iops", HA: true, Region: "eastus"},
		{Cloud: "aws", Engine: "postgres", Instance: "db.m6g.4xlarge", Storage: "gp3:1000GiB:12000iops", HA: true, Region: "us-east-1"},
		{Cloud: "gcp", SKU: "db-custom-16-65536", Storage: "ssd:1000GiB", Region: "us-central1"},
	}
	for i, tg := range s.Targets {
		if tg.Price != nil || tg.PriceLookup == nil || *tg.PriceLookup != want[i] {
			t.Errorf("%s: price %v, lookup %+v; want %+v", tg.Name, tg.Price, tg.PriceLookup, want[i])
		}
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func TestParsePricesErrors(t *testing.T) {
	const like = `{monthly: 2172.72, source: "...", date: 2024-01}`
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"empty", "", []string{`p.yaml:1:1: the prices file is empty; it needs prices: with named prices`}},
		{"list", "- a\n", []string{`p.yaml:1:1: a prices file is a mapping with prices:, not a list`}},
		{"no prices", "price:\n  a: {monthly: 1}\n", []string{
			`p.yaml:1:1: unknown key "price" in the prices file; did you mean "prices"?`,
			`p.yaml:1:1: the prices file has no prices; add prices: with named prices like ` + like}},
		{"prices empty", "prices: {}\n", []string{`p.yaml:1:9: prices is empty; give at least one named price`}},
		{"prices list", "prices: [a]\n", []string{
			`p.yaml:1:9: prices must be a mapping like {name: ` + like + `}, not a list`}},
		{"entry not a mapping", "prices:\n  a: 5\n", []string{
			`p.yaml:2:6: price "a" must be a mapping like ` + like + `, not 5`}},
		{"entry name", "prices:\n  a b: {monthly: 1}\n", []string{
			`p.yaml:2:3: invalid price name "a b"; use up to 64 letters, digits, '_', '.' and '-', starting with a letter or digit`}},
		{"entry twice", "prices:\n  a: {monthly: 5}\n  a: {monthly: 6}\n", []string{
			`p.yaml:3:3: "a" is given twice (first at line 2)`}},
		{"unknown key", "prices:\n  a:\n    montly: 5\n", []string{
			`p.yaml:3:5: unknown key "montly" in price "a"; did you mean "monthly"?`,
			`p.yaml:3:5: price "a": the price has no amounts; give monthly, or components such as compute_per_hour`}},
		{"ref", "prices:\n  a: {ref: b}\n", []string{
			`p.yaml:2:7: ref is for a study's targets; an entry of a prices file gives the price itself`}},
		{"total with components", "prices:\n  a: {monthly: 5, ha: 2}\n", []string{
			`p.yaml:2:16: monthly is the whole month; give it or components such as ha, not both`}},
		{"negative", "prices:\n  a: {monthly: -5}\n", []string{`p.yaml:2:16: monthly -5 is out of range; want more than 0`}},
		{"currency", "prices:\n  a: {monthly: 5, currency: usd}\n", []string{
			`p.yaml:2:29: invalid currency "usd"; want a code of three upper-case letters like USD or EUR`}},
		{"source list", "prices:\n  a:\n    monthly: 5\n    source: [a, b]\n", []string{
			`p.yaml:4:13: source must be a string, not a list`}},
		{"tab", "prices:\n\ta: {monthly: 5}\n", []string{`p.yaml:2: invalid YAML: found character that cannot start any token`}},
		{"two documents", "prices: {a: {monthly: 5}}\n---\nprices: {}\n", []string{
			`p.yaml:2:1: a prices file holds one YAML document; remove the second one or the --- before it`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prices, err := ParsePrices("p.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("ParsePrices succeeded, want %q", tt.want)
			}
			if prices != nil {
				t.Errorf("ParsePrices returned prices with its error")
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Errorf("error is %T, want Errors", err)
			}
			if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestParsePricesAnchors(t *testing.T) {
	prices, err := ParsePrices("p.yaml", []byte(`prices:
  base: &base {source: "a quote", date: 2025, compute_per_hour: 1}
  big:
    <<: *base
    compute_per_hour: 2
    ha: 2
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]cost.Price{
		"base": {ComputePerHour: 1, Currency: "USD", Source: "a quote", Date: "2025"},
		"big":  {ComputePerHour: 2, HA: 2, Currency: "USD", Source: "a quote", Date: "2025"},
	}
	if !reflect.DeepEqual(prices.Given, want) {
		t.Errorf("prices:\n got %+v\nwant %+v", prices, want)
	}
}

// TestLoadSeedPrices checks the shipped prices file: every entry is valid,
// says where its figures come from and when, and adds up to the total its
// report publishes.
func TestLoadSeedPrices(t *testing.T) {
	prices, err := LoadPrices("../../prices/seed-reports.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The reports' totals per month, in USD.
	totals := map[string]float64{
		"azure-flexible-d16ads-v5":               2172.72,  // report 000, Table 2
		"azure-single-gp-gen5-16":                1788.608, // report 000, Table 2
		"instaclustr-azure-ds13-v2-premium-disk": 2693.15,  // report 003, "Price per month"
		"instaclustr-azure-e8s-v4-anf":           2872.90,  // report 003, "Price per month"
		"aws-i3-4xlarge":                         911,      // report 004
		"aws-i3-8xlarge":                         1822,
		"azure-standard-l16":                     1000,
		"digitalocean-128gb":                     640,
		"digitalocean-192gb":                     960,
		"gcp-32x192":                             1400,
		"upcloud-128gb":                          640,
	}
	// Report 003 carries no date.
	undated := map[string]bool{"instaclustr-azure-ds13-v2-premium-disk": true, "instaclustr-azure-e8s-v4-anf": true}
	for name, p := range prices.Given {
		t.Run(name, func(t *testing.T) {
			if err := p.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			if !strings.HasPrefix(p.Source, "Seed report 00") {
				t.Errorf("Source %q does not name its seed report", p.Source)
			}
			if !strings.Contains(p.Source, "not a current price") && !strings.Contains(p.Source, "not current prices") {
				t.Errorf("Source %q does not say its figures are not current prices", p.Source)
			}
			if (p.Date == "") != undated[name] {
				t.Errorf("Date = %q; undated: %v", p.Date, undated[name])
			}
			if p.Currency != "USD" {
				t.Errorf("Currency = %q, want USD", p.Currency)
			}
			want, ok := totals[name]
			if !ok {
				t.Fatalf("no published total for %s in this test", name)
			}
			if got := p.Monthly(); got <= 0 || math.Abs(got-want) > 0.0005 {
				t.Errorf("Monthly = %v, want the report's %v (%s)", got, want, p.Detail())
			}
		})
	}
	for name := range totals {
		if _, ok := prices.Given[name]; !ok {
			t.Errorf("%s is not in the file", name)
		}
	}
}

func TestLoadPricesMissing(t *testing.T) {
	_, err := LoadPrices("testdata/no-such-prices.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), "read prices: ") {
		t.Errorf("LoadPrices(missing) = %v, want a read prices error", err)
	}
}

// TestExamplePrices checks the prices the examples attach to their local
// stand-ins for the reports' deployments.
func TestExamplePrices(t *testing.T) {
	tests := []struct {
		file   string
		refs   map[string]string // target: ref
		totals map[string]float64
	}{
		{"pg11-vs-pg16.yaml",
			map[string]string{"pg11": "azure-single-gp-gen5-16", "pg16": "azure-flexible-d16ads-v5"},
			map[string]float64{"pg11": 1788.608, "pg16": 2172.72}},
		{"clients-sweep.yaml",
			map[string]string{"default": "instaclustr-azure-ds13-v2-premium-disk", "tuned": "instaclustr-azure-e8s-v4-anf"},
			map[string]float64{"default": 2693.15, "tuned": 2872.90}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := Load("../../examples/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if s.Prices != "../../prices/seed-reports.yaml" {
				t.Errorf("Prices = %q, want ../../prices/seed-reports.yaml", s.Prices)
			}
			var names []string
			for _, tg := range s.Targets {
				names = append(names, tg.Name)
				if tg.PriceRef != tt.refs[tg.Name] {
					t.Errorf("%s: PriceRef = %q, want %q", tg.Name, tg.PriceRef, tt.refs[tg.Name])
				}
				if tg.Price == nil {
					t.Errorf("%s has no price", tg.Name)
				} else if got := tg.Price.Monthly(); math.Abs(got-tt.totals[tg.Name]) > 0.0005 {
					t.Errorf("%s: Monthly = %v, want %v", tg.Name, got, tt.totals[tg.Name])
				}
			}
			if len(names) != len(tt.refs) {
				t.Errorf("targets %v, want %d", names, len(tt.refs))
			}
		})
	}
}

// TestFingerprintPrice checks that a target's price, in any form, leaves the
// fingerprints of its runs alone.
func TestFingerprintPrice(t *testing.T) {
	fingerprints := func(t *testing.T, yaml string) []string {
		t.Helper()
		var f []string
		for _, c := range mustParse(t, yaml).Plan() {
			f = append(f, c.Key+" "+c.Fingerprint)
		}
		return f
	}
	const price = "    price: {per_hour: 1}\n"
	unpriced := strings.Replace(fingerprintBase, price, "", 1)
	base := fingerprints(t, unpriced)
	tests := []struct {
		name, yaml string
	}{
		{"per_hour", fingerprintBase},
		{"monthly", strings.Replace(fingerprintBase, price, "    price: {monthly: 1234.5, currency: EUR}\n", 1)},
		{"components", strings.Replace(fingerprintBase, price, "    price: {compute_monthly: 500, storage_gb: 100, storage_per_gb_month: 0.1, ha: 2}\n", 1)},
		{"ref", "prices: testdata/prices.yaml\n" + strings.Replace(fingerprintBase, price, "    price: {ref: small}\n", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(fingerprintBase, price) {
				t.Fatalf("base has no %q", price)
			}
			if got := fingerprints(t, tt.yaml); !slices.Equal(got, base) {
				t.Errorf("fingerprints:\n got %q\nwant %q", got, base)
			}
		})
	}
}
