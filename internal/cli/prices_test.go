package cli_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/pricelist/pricetest"
)

// priceLists points the command line at the recorded and constructed price
// lists, and returns the flag of a cache of the test's own.
func priceLists(t *testing.T) (az, aws *pricetest.Server, cache string) {
	t.Helper()
	az, aws = pricetest.Azure(t, 5), pricetest.AWS(t)
	t.Setenv("PGBAKEOFF_AZURE_PRICES_URL", az.URL)
	t.Setenv("PGBAKEOFF_AWS_PRICES_URL", aws.URL)
	return az, aws, "--price-cache=" + t.TempDir()
}

func TestPricesCommand(t *testing.T) {
	_, aws, cache := priceLists(t)
	code, out, errOut := run(t, "prices", "aws", "--engine", "postgres", "--instance", "db.m6g.4xlarge",
		"--storage", "gp3:1000GiB:15000iops", "--multi-az", "--region", "us-east-1", cache)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// Constructed prices: 1.232/h, 1000 GB x 0.115, 3000 IOPS over the
	// baseline x 0.02, Multi-AZ rows twice each.
	for _, want := range []string{
		"compute 1.2320 899.36 compute 1.232/h x 730 = 899.36",
		"storage 0.1575 115.00 storage 1000 GB x 0.115 = 115.00",
		"IOPS 0.0822 60.00 IOPS 3000 x 0.02 = 60.00",
		"HA 1.4717 1074.36 HA 1074.36",
		"total 2.9435 2148.72 (730 hours a month)",
		"effective: 2026-11-01",
		"fetched: 20",
		`price: {cloud: aws, engine: postgres, instance: db.m6g.4xlarge, storage: "gp3:1000GiB:15000iops", multi_az: true, region: us-east-1}`,
	} {
		if !strings.Contains(squeeze(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// Cached: offline gives the same price, without fetching.
	code, out2, errOut := run(t, "prices", "aws", "--instance", "db.m6g.4xlarge", "--storage", "gp3:1000GiB:15000iops",
		"--multi-az", "--region", "us-east-1", cache, "--offline")
	if code != 0 || errOut != "" || !strings.Contains(squeeze(out2), "total 2.9435 2148.72") || aws.Requests.Load() != 1 {
		t.Errorf("offline: exit %d, %d region files fetched\n%s%s", code, aws.Requests.Load(), out2, errOut)
	}
	// Stale and offline: used, with a warning on stderr.
	code, _, errOut = run(t, "prices", "aws", "--instance", "db.m6g.large", "--region", "us-east-1", cache, "--offline", "--price-max-age", "1ns")
	if code != 0 || !strings.Contains(errOut, "pgbakeoff: warning: using the cached AWS price list of Amazon RDS for PostgreSQL in us-east-1") {
		t.Errorf("stale offline: exit %d: %s", code, errOut)
	}
	// The list down and the cache stale: the cache, and what failed.
	aws.Down.Store(true)
	code, _, errOut = run(t, "prices", "aws", "--instance", "db.m6g.large", "--region", "us-east-1", cache, "--price-max-age", "1ns")
	if code != 0 || !strings.Contains(errOut, "503 Service Unavailable") || !strings.Contains(errOut, "; using the cached AWS price list") {
		t.Errorf("down: exit %d: %s", code, errOut)
	}
}

func TestPricesBadInput(t *testing.T) {
	_, _, cache := priceLists(t)
	t.Setenv("PGBAKEOFF_GCP_API_KEY", "")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"prices", "azure", "--sku", "Standard_D16ads_v6", "--region", "eastus"}, 2,
			"pgbakeoff: no SKU Standard_D16ads_v6 for Azure Database for PostgreSQL flexible server in eastus; nearest: Standard_D16ads_v5, Standard_D16ds_v5, Standard_D2ads_v5"},
		{[]string{"prices", "aws", "--instance", "db.m6g.4xlarge", "--region", "us-east-3"}, 2,
			"pgbakeoff: no Amazon RDS prices for region us-east-3; nearest: us-east-1, us-east-2, us-west-2"},
		{[]string{"prices", "aws", "--instance", "db.m6g.4xlarge"}, 1, "pgbakeoff: aws: no region; give one such as us-east-1"},
		{[]string{"prices", "aws", "--instance", "db.m6g.4xlarge", "--region", "us-east-1", "--storage", "gp3:lots"}, 1, `"lots" is a second type`},
		{[]string{"prices", "gcp", "--tier", "db-custom-4-16384", "--region", "us-central1"}, 1, "give the price by hand"},
		{[]string{"prices", "azure", "--sku", "Standard_D2ads_v5", "--region", "westus", "--offline"}, 1, "is not cached; look it up once without --offline"},
		{[]string{"prices", "ibm"}, 2, `unknown prices "ibm"`},
	} {
		code, out, errOut := run(t, append(tt.args, cache)...)
		if code != tt.code || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit %d and %q", strings.Join(tt.args, " "), code, errOut, out, tt.code, tt.want)
		}
	}
}

// squeeze is s with each run of spaces as one, for checking table rows.
func squeeze(s string) string { return regexp.MustCompile(` +`).ReplaceAllString(s, " ") }

// A Cloud Billing API key is used and never shown.
func TestPricesGCPKey(t *testing.T) {
	const key = "AIzaCLITESTKEY-never-shown"
	_, _, cache := priceLists(t)
	srv := pricetest.GCP(t, key)
	t.Setenv("PGBAKEOFF_GCP_PRICES_URL", srv.URL)
	t.Setenv("PGBAKEOFF_GCP_API_KEY", "AIzaWRONG-never-shown")
	code, out, errOut := run(t, "prices", "gcp", "--tier", "db-custom-16-65536", "--region", "us-central1", cache)
	if code != 1 || !strings.Contains(errOut, "403 Forbidden") || strings.Contains(out+errOut, "AIzaWRONG") {
		t.Errorf("a wrong key: exit %d\n%s%s", code, out, errOut)
	}
	t.Setenv("PGBAKEOFF_GCP_API_KEY", key)
	code, out, errOut = run(t, "prices", "gcp", "--tier", "db-custom-16-65536", "--storage", "ssd:1000GiB", "--ha", "--region", "us-central1", cache)
	if code != 0 || !strings.Contains(out, "Cloud SQL for PostgreSQL: Regional - vCPU in Americas") || strings.Contains(out+errOut, key) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "prices", "--help")
	if code != 0 || strings.Contains(out+errOut, key) {
		t.Errorf("help shows the key: %s", out)
	}
}

// A study whose targets name their clouds' price lists: the prices are
// looked up before anything runs, kept with the study, and shown in its
// reports by the hour with their source, effective date and fetch time, and
// as TPS per dollar.
func TestStudyLookedUpPrices(t *testing.T) {
	pgtest.Long(t)
	az, aws, cache := priceLists(t)
	dsn := pgtest.NewDatabase(t)
	db := pgtest.Query(t, dsn, "select current_database()")
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	clitest.WriteFile(t, filepath.Join(dir, "one.sql"), "SELECT 1;\n")
	study := func(sku string) string {
		return fmt.Sprintf(`name: priced
targets:
  - name: flex
    dsn: %q
    price: {cloud: azure, sku: %s, storage: "premium-ssd-v2:1TiB:51200iops", ha: true, region: eastus}
  - name: rds
    dsn: %q
    price: {cloud: aws, engine: postgres, instance: db.m6g.4xlarge, storage: "gp3:1000GiB:15000iops", multi_az: true, region: us-east-1}
  - name: onprem
    dsn: %q
    price: {per_hour: 1.5, source: "a quote from the hosting company"}
workloads:
  - {name: one, kind: pgbench, database: %s, dataset: keep, run: {file: [one.sql]}}
matrix: {clients: [2], repeat: 1, warmup: 0s, duration: 1s}
`, pgtest.DSN(t), sku, pgtest.DSN(t), pgtest.DSN(t), db)
	}
	file := filepath.Join(dir, "priced.yaml")

	// An unknown SKU stops the study before anything runs, naming the nearest.
	clitest.WriteFile(t, file, study("Standard_D16ads_v6"))
	code, out, errOut := run(t, "study", "run", file, "--results", results, "--progress", "0", cache)
	if code == 0 || !strings.Contains(errOut, "target flex: price: no SKU Standard_D16ads_v6 for Azure Database for PostgreSQL flexible server in eastus; nearest: Standard_D16ads_v5") ||
		!strings.Contains(errOut, "; fix its price: in "+file) {
		t.Fatalf("unknown SKU: exit %d\n%s%s", code, out, errOut)
	}
	// Given in a prices file, the mistake is named there.
	clitest.WriteFile(t, filepath.Join(dir, "prices.yaml"), `prices:
  flex-v6: {cloud: azure, sku: Standard_D16ads_v6, storage: "premium-ssd-v2:1TiB:51200iops", region: eastus}
`)
	clitest.WriteFile(t, filepath.Join(dir, "ref.yaml"), fmt.Sprintf(`name: ref
prices: prices.yaml
targets:
  - {name: flex, dsn: %q, price: {ref: flex-v6}}
workloads:
  - {name: one, kind: pgbench, database: %s, dataset: keep, run: {file: [one.sql]}}
matrix: {clients: [2], repeat: 1, warmup: 0s, duration: 1s}
`, pgtest.DSN(t), db))
	code, out, errOut = run(t, "study", "run", filepath.Join(dir, "ref.yaml"), "--results", results, "--progress", "0", cache)
	if code == 0 || !strings.Contains(errOut, "target flex: price: no SKU Standard_D16ads_v6") ||
		!strings.Contains(errOut, "; fix the entry flex-v6 in "+filepath.Join(dir, "prices.yaml")) {
		t.Fatalf("unknown SKU in a prices file: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "run 1:") {
		t.Errorf("a run was made before the price was checked:\n%s%s", out, errOut)
	}

	clitest.WriteFile(t, file, study("Standard_D16ads_v5"))
	code, out, errOut = run(t, "study", "plan", file, "--results", results)
	if code != 0 || !strings.Contains(out, "    price: looked up when the study runs (aws --engine postgres --instance db.m6g.4xlarge --storage gp3:1000GiB:15000iops --multi-az --region us-east-1)") ||
		!strings.Contains(out, "    price: compute 1.5/h x 730 = 1095.00; total 1095.00 USD/month") {
		t.Errorf("study plan: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = run(t, "study", "run", file, "--results", results, "--progress", "0", cache); code != 0 {
		t.Fatalf("study run: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(errOut, "warning") {
		t.Errorf("study run warned: %s", errOut)
	}
	fetches := az.Requests.Load() + aws.Requests.Load()

	// Reports read the prices kept with the study, even with the lists down.
	az.Down.Store(true)
	aws.Down.Store(true)
	md := filepath.Join(dir, "r.md")
	if code, _, errOut = run(t, "report", "--study", "priced", "--results", results, "-o", md); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, errOut)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	// Constructed prices: Azure 1.424/h, 1024 GiB x 0.0945, 48,200 IOPS x
	// 0.0055, a standby as much again; AWS as in TestPricesCommand.
	azMonthly := 2 * (1.424*730 + 1024*0.0945 + 48200*0.0055)
	for _, want := range []string{
		"| target | per hour | per month | compute/h | storage/h | IOPS/h | HA/h | made up of (a month) | source | effective | fetched |",
		fmt.Sprintf("| flex | $%.4f | $%s | $1.4240 | $%.4f | $%.4f | $%.4f |", azMonthly/730, thousands(azMonthly), 1024*0.0945/730, 48200*0.0055/730, azMonthly/2/730),
		"| rds | $2.9435 | $2,149 | $1.2320 | $0.1575 | $0.0822 | $1.4717 |",
		"| onprem | $1.5000 | $1,095 | $1.5000 | - | - | - | compute 1.5/h x 730 = 1095.00; total 1095.00 USD/month | a quote from the hosting company |",
		"Azure Retail Prices API", "eastus, Consumption: Azure Database for PostgreSQL Flexible Server General Purpose Dadsv5 Series Compute 16 vCore",
		"| 2025-10-01 |", "| 2026-11-01 |",
		"tps per $/month",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if !regexp.MustCompile(`\| 20\d\d-\d\d-\d\d \d\d:\d\d UTC \|`).MatchString(report) {
		t.Errorf("the report has no fetch time")
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
	code, out, _ = run(t, "compare", "--study", "priced", "--results", results)
	if code != 0 || !strings.Contains(out, "rds: $2.9435/hour (compute $1.2320 + storage $0.1575 + IOPS $0.0822 + HA $1.4717) = $2,149/month") {
		t.Errorf("compare: exit %d\n%s", code, out)
	}

	// A second run keeps the prices it looked up: no list is asked again.
	az.Down.Store(false)
	aws.Down.Store(false)
	if code, out, errOut = run(t, "study", "run", file, "--results", results, cache); code != 0 || az.Requests.Load()+aws.Requests.Load() != fetches {
		t.Errorf("study run again: exit %d, %d fetches, %d before\n%s%s", code, az.Requests.Load()+aws.Requests.Load(), fetches, out, errOut)
	}
	// study prices --refresh looks them up anew (from the cache, still fresh).
	code, out, errOut = run(t, "study", "prices", file, "--results", results, "--refresh", cache)
	if code != 0 || !strings.Contains(out, "rds: aws --engine postgres --instance db.m6g.4xlarge") || !strings.Contains(out, "onprem: compute 1.5/h x 730") {
		t.Errorf("study prices: exit %d\n%s%s", code, out, errOut)
	}
}

// thousands is a whole amount with thousands separators, as reports print it.
func thousands(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
