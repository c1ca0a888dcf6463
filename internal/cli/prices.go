package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pricelist"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The price lists' addresses, for a mirror of them (and for tests against
// recorded answers); unset, the live lists.
const (
	envAzurePrices = "PGBAKEOFF_AZURE_PRICES_URL"
	envAWSPrices   = "PGBAKEOFF_AWS_PRICES_URL"
	envGCPPrices   = "PGBAKEOFF_GCP_PRICES_URL"
)

// priceFlags are the flags of every command that looks prices up.
type priceFlags struct {
	json    bool // prices alone: print a pricelist.Quote
	offline bool
	cache   string
	maxAge  time.Duration
}

func (pf *priceFlags) add(f *pflag.FlagSet) {
	f.BoolVar(&pf.offline, "offline", false, "use cached price lists only: no network")
	f.StringVar(&pf.cache, "price-cache", "", "directory of cached price lists (default: prices in pgbakeoff's cache directory, where downloaded binaries go)")
	f.DurationVar(&pf.maxAge, "price-max-age", pricelist.DefaultMaxAge, "fetch a cached price list again when older than this; an older one is still used, with a warning, when the list cannot be fetched or with --offline")
}

// lister is a pricelist.Lister as the flags and the environment set it, warning on stderr.
func (pf *priceFlags) lister(env *Env) (*pricelist.Lister, error) {
	if pf.maxAge <= 0 {
		return nil, usageError{fmt.Errorf("--price-max-age must be positive, got %s", pf.maxAge)}
	}
	cache := pf.cache
	if cache == "" {
		dir, err := localpg.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		cache = filepath.Join(dir, "prices")
	}
	return pricelist.New(pricelist.Options{
		CacheDir: cache, Offline: pf.offline, MaxAge: pf.maxAge,
		AzureURL: env.Getenv(envAzurePrices), AWSURL: env.Getenv(envAWSPrices), GCPURL: env.Getenv(envGCPPrices),
		GCPKey: env.Getenv(pricelist.GCPKeyEnv), Now: env.Now,
		Warn: func(w string) { fmt.Fprintf(env.Stderr, "pgbakeoff: warning: %s\n", w) },
	}), nil
}

// `prices azure|aws|gcp ...`: what a deployment costs by its cloud's price list.
func newPricesCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prices",
		Short: "Look up what a managed PostgreSQL deployment costs in its cloud's public price list",
		Long: `prices looks a deployment up in its cloud's own price list and prints its hourly and monthly
price broken down, where each figure comes from, the list's effective date and when it was
fetched. Lists are cached; --offline uses the cache alone. The same keys, in a study file's
target as price: {cloud: ...}, price that target in reports.`,
		Args: cobra.ArbitraryArgs,
		RunE: unknownSub("azure, aws, gcp"),
	}
	var pf priceFlags
	pf.add(cmd.PersistentFlags())
	cmd.PersistentFlags().BoolVar(&pf.json, "json", false, "print one JSON object (its schema: pgbakeoff schema prices)")
	// cloud is the subcommand of a cloud, looking up the query its flags fill.
	cloud := func(name, short, example string, q *pricelist.Query) *cobra.Command {
		c := &cobra.Command{Use: name, Short: short, Example: example, Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				q.Cloud = name
				return lookupPrice(c, env, &pf, *q)
			}}
		printsJSON(c, "prices")
		return c
	}
	cmd.AddCommand(azurePriceCmd(cloud), awsPriceCmd(cloud), gcpPriceCmd(cloud))
	return cmd
}

// lookupPrice prints the price of q from its cloud's list; a deployment the list
// does not hold is a usage error, naming the nearest.
func lookupPrice(c *cobra.Command, env *Env, pf *priceFlags, q pricelist.Query) error {
	l, err := pf.lister(env)
	if err != nil {
		return err
	}
	ctx, stop := env.Interrupt(c.Context())
	defer stop()
	p, err := l.Price(ctx, q)
	if err != nil {
		var nf *pricelist.NotFoundError
		if errors.As(err, &nf) {
			return usageError{err}
		}
		return err
	}
	if pf.json {
		qt := pricelist.NewQuote(q, p)
		qt.SchemaVersion = engine.SchemaVersion
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(qt)
	}
	writePrice(env.Stdout, q, p)
	return nil
}

// cloudCmd makes a cloud's subcommand, which looks up the query its flags fill.
type cloudCmd func(name, short, example string, q *pricelist.Query) *cobra.Command

// azurePriceCmd is `prices azure`.
func azurePriceCmd(cloud cloudCmd) *cobra.Command {
	var az pricelist.Query
	azure := cloud("azure", "Azure Database for PostgreSQL flexible server, from the Azure Retail Prices API",
		`  pgbakeoff prices azure --sku Standard_D16ads_v5 --storage 1TiB --region eastus
  pgbakeoff prices azure --sku Standard_D16ads_v5 --storage premium-ssd-v2:1TiB:51200iops --ha --region eastus`, &az)
	f := azure.Flags()
	f.StringVar(&az.Service, "service", "flexible-server", "the service: "+strings.Join(pricelist.AzureServices, ", "))
	f.StringVar(&az.SKU, "sku", "", "compute size, such as Standard_D16ads_v5 or Standard_B1ms")
	f.StringVar(&az.Storage, "storage", "", "storage: a size (1TiB, 512GiB) with optional type (premium-ssd, the default, or premium-ssd-v2), IOPS (20000iops) and throughput (500mbps), joined by ':'")
	f.BoolVar(&az.HA, "ha", false, "high availability: a standby, billed as the primary")
	f.StringVar(&az.Region, "region", "", "region, such as eastus")
	f.StringVar(&az.Currency, "currency", "", "currency of the prices, such as EUR (default USD)")
	return azure
}

// awsPriceCmd is `prices aws`.
func awsPriceCmd(cloud cloudCmd) *cobra.Command {
	var aw pricelist.Query
	aws := cloud("aws", "Amazon RDS for PostgreSQL, from AWS's bulk price list",
		`  pgbakeoff prices aws --engine postgres --instance db.m6g.4xlarge --storage gp3:1000GiB:12000iops --multi-az --region us-east-1`, &aw)
	f := aws.Flags()
	f.StringVar(&aw.Engine, "engine", "postgres", "database engine: postgres")
	f.StringVar(&aw.Instance, "instance", "", "instance class, such as db.m6g.4xlarge")
	f.StringVar(&aw.Storage, "storage", "", "storage: type (gp3, the default, gp2, io1, io2), size, IOPS and throughput joined by ':', such as gp3:1000GiB:12000iops:500mibps")
	f.BoolVar(&aw.HA, "multi-az", false, "Multi-AZ: one standby in another zone")
	f.StringVar(&aw.Region, "region", "", "region, such as us-east-1")
	return aws
}

// gcpPriceCmd is `prices gcp`.
func gcpPriceCmd(cloud cloudCmd) *cobra.Command {
	var gc pricelist.Query
	gcp := cloud("gcp", "Google Cloud SQL for PostgreSQL, from the Cloud Billing Catalog (needs an API key in $"+pricelist.GCPKeyEnv+")",
		`  PGBAKEOFF_GCP_API_KEY=... pgbakeoff prices gcp --tier db-custom-16-65536 --storage ssd:1000GiB --ha --region us-central1`, &gc)
	f := gcp.Flags()
	f.StringVar(&gc.SKU, "tier", "", "machine tier, such as db-custom-16-65536 (vCPUs and MB of memory)")
	f.StringVar(&gc.Storage, "storage", "", "storage: type (ssd, the default, or hdd) and size joined by ':', such as ssd:1000GiB")
	f.BoolVar(&gc.HA, "ha", false, "high availability: a regional instance")
	f.StringVar(&gc.Region, "region", "", "region, such as us-central1")
	return gcp
}

// writePrice prints a price looked up: per hour and per month by component,
// where it comes from, and the price as a study file gives it.
func writePrice(w io.Writer, q pricelist.Query, p cost.Price) {
	fmt.Fprintf(w, "%s\n\n", q)
	cur := p.Currency
	fmt.Fprintf(w, "  %-11s %12s %12s   %s\n", "", cur+"/hour", cur+"/month", "made up of")
	for _, c := range p.Components() {
		fmt.Fprintf(w, "  %-11s %12.4f %12.2f   %s\n", c.Label(), c.Monthly/cost.HoursPerMonth, c.Monthly, c.Detail)
	}
	fmt.Fprintf(w, "  %-11s %12.4f %12.2f   (%d hours a month)\n\n", "total", p.Monthly()/cost.HoursPerMonth, p.Monthly(), cost.HoursPerMonth)
	// The source is the list, then each price of it used: one a line.
	fmt.Fprintf(w, "source:    %s\n", strings.ReplaceAll(p.Source, "; ", ";\n           "))
	fmt.Fprintf(w, "effective: %s\n", p.Date)
	if t, err := time.Parse(time.RFC3339, p.Fetched); err == nil {
		fmt.Fprintf(w, "fetched:   %s\n", t.UTC().Format("2006-01-02 15:04 UTC"))
	}
	fmt.Fprintf(w, "\nin a study file's target:\n  price: %s\n", studyPrice(q))
}

// studyPrice is q as a study file's price: {cloud: aws, instance: ...}.
func studyPrice(q pricelist.Query) string {
	parts := []string{"cloud: " + q.Cloud}
	for _, f := range q.Fields() {
		v := f.Value
		if strings.ContainsAny(v, ":{}[],#") {
			v = fmt.Sprintf("%q", v)
		}
		parts = append(parts, f.Key+": "+v)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
