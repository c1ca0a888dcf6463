package pricelist

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
	"github.com/pgbakeoff/pgbakeoff/internal/suggest"
)

const (
	gcpList = "Google Cloud Billing Catalog (Cloud SQL)"
	// gcpCloudSQL is Cloud SQL's service in the catalog.
	gcpCloudSQL = "9662-B51E-5089"
	// GCPKeyEnv is the environment variable that holds a Cloud Billing API key.
	GCPKeyEnv   = "PGBAKEOFF_GCP_API_KEY"
	gcpMaxPages = 200
)

// gcpSKU is a Cloud SQL for PostgreSQL SKU of the catalog, as cached.
type gcpSKU struct {
	Description string   `json:"description"`
	Regions     []string `json:"regions"`
	Unit        string   `json:"unit"`
	Price       float64  `json:"price"` // per Unit, first tier
	Currency    string   `json:"currency"`
	Effective   string   `json:"effective"`
}

// gcpItem is a SKU of the catalog's answer; the pointers are what a price
// cannot be made without.
type gcpItem struct {
	Description *string `json:"description"`
	Category    *struct {
		UsageType string `json:"usageType"`
	} `json:"category"`
	ServiceRegions []string `json:"serviceRegions"`
	PricingInfo    *[]struct {
		Effective  string `json:"effectiveTime"`
		Expression *struct {
			UsageUnit *string `json:"usageUnit"`
			Tiers     *[]struct {
				Start     float64 `json:"startUsageAmount"`
				UnitPrice *struct {
					Currency string `json:"currencyCode"`
					Units    string `json:"units"`
					Nanos    int64  `json:"nanos"`
				} `json:"unitPrice"`
			} `json:"tieredRates"`
		} `json:"pricingExpression"`
	} `json:"pricingInfo"`
}

// gcpSKUPattern reads the Cloud SQL for PostgreSQL SKUs pricing uses.
var gcpSKUPattern = regexp.MustCompile(`^Cloud SQL for PostgreSQL: (Zonal|Regional) - (vCPU|RAM|Standard storage|Low cost storage) in `)

// gcpTier reads a custom machine tier: db-custom-16-65536 is 16 vCPUs and
// 65,536 MB of memory.
var gcpTier = regexp.MustCompile(`^db-custom-(\d+)-(\d+)$`)

func (l *Lister) gcp(ctx context.Context, q Query, st Storage) (cost.Price, error) {
	m := gcpTier.FindStringSubmatch(q.SKU)
	if m == nil {
		return cost.Price{}, fmt.Errorf("gcp: tier %q is not a custom machine tier such as db-custom-16-65536 (vCPUs and MB of memory); price other tiers by hand", q.SKU)
	}
	vcpus, _ := strconv.ParseFloat(m[1], 64)
	memMB, _ := strconv.ParseFloat(m[2], 64)
	what := "Google Cloud SQL price list"
	var skus []gcpSKU
	e, err := l.list(ctx, "gcp-cloudsql-postgresql-"+hostOf(l.o.GCPURL), what, l.gcpFetch, &skus)
	if err != nil {
		return cost.Price{}, err
	}
	var regions []string
	for _, s := range skus {
		regions = append(regions, s.Regions...)
	}
	slices.Sort(regions)
	regions = slices.Compact(regions)
	if !slices.Contains(regions, q.Region) {
		return cost.Price{}, &NotFoundError{What: "Cloud SQL for PostgreSQL prices", Where: "region " + q.Region, Nearest: suggest.Nearest(q.Region, regions, 5)}
	}

	var used, dates []string
	find := func(kind, resource, unit string) (float64, error) {
		matches := func(s gcpSKU) bool {
			sm := gcpSKUPattern.FindStringSubmatch(s.Description)
			return sm != nil && sm[1] == kind && sm[2] == resource && slices.Contains(s.Regions, q.Region)
		}
		// The SKU of the fewest regions with this one: a region's own SKU over
		// one of its continent. Two of as few regions must agree.
		var best *gcpSKU
		for i, s := range skus {
			if matches(s) && (best == nil || len(s.Regions) < len(best.Regions)) {
				best = &skus[i]
			}
		}
		if best == nil {
			return 0, &NotFoundError{What: fmt.Sprintf("%s %s SKU", kind, resource), Where: "Cloud SQL for PostgreSQL in " + q.Region}
		}
		for _, s := range skus {
			if matches(s) && len(s.Regions) == len(best.Regions) && s.Price != best.Price {
				return 0, fmt.Errorf("gcp: %s and %s both price %s in %s, differently; report this as a bug", best.Description, s.Description, resource, q.Region)
			}
		}
		if best.Price <= 0 {
			return 0, &ShapeError{List: gcpList, Field: "unitPrice of " + best.Description, Msg: "is 0"}
		}
		if best.Unit != unit {
			return 0, &ShapeError{List: gcpList, Field: "pricingExpression.usageUnit of " + best.Description, Msg: fmt.Sprintf("is %q where it was %q", best.Unit, unit)}
		}
		used, dates = append(used, best.Description), append(dates, best.Effective)
		return best.Price, nil
	}
	deployment := func(kind string) (cost.Price, error) {
		cpu, err := find(kind, "vCPU", "h")
		if err != nil {
			return cost.Price{}, err
		}
		ram, err := find(kind, "RAM", "GiBy.h")
		if err != nil {
			return cost.Price{}, err
		}
		p := cost.Price{ComputePerHour: vcpus*cpu + memMB/1024*ram}
		if st.GiB > 0 {
			resource := map[string]string{"": "Standard storage", "ssd": "Standard storage", "hdd": "Low cost storage"}[st.Type]
			if resource == "" {
				return cost.Price{}, fmt.Errorf("gcp: storage type %q is not one Cloud SQL has; want ssd (the default) or hdd", st.Type)
			}
			if st.IOPS > 0 || st.MBps > 0 {
				return cost.Price{}, fmt.Errorf("gcp: Cloud SQL's IOPS and throughput come with its storage's size; leave them out")
			}
			if p.StoragePerGBMonth, err = find(kind, resource, "GiBy.mo"); err != nil {
				return cost.Price{}, err
			}
			p.StorageGB = st.GiB
		}
		return p, nil
	}
	p, err := deployment("Zonal")
	if err != nil {
		return cost.Price{}, err
	}
	if q.HA {
		regional, err := deployment("Regional")
		if err != nil {
			return cost.Price{}, err
		}
		if p.HAMonthly = roundMicro(regional.Monthly() - p.Monthly()); p.HAMonthly <= 0 {
			return cost.Price{}, fmt.Errorf("gcp: a regional %s costs no more than a zonal one in %s's list; report this as a bug", q.SKU, q.Region)
		}
	}
	p.Currency = cost.DefaultCurrency
	p.Source = fmt.Sprintf("%s, service %s, %s, %s: %s", gcpList, gcpCloudSQL, q.Region, q.SKU, strings.Join(used, "; "))
	p.Date = newest(dates)
	p.Fetched = e.fetched()
	return p, nil
}

// gcpFetch reads the catalog's Cloud SQL SKUs, page by page, keeping those
// of PostgreSQL that pricing uses. The key is sent to Google alone: the
// cached source is the address without it.
func (l *Lister) gcpFetch(ctx context.Context) (*entry, error) {
	if l.o.GCPKey == "" {
		return nil, fmt.Errorf("gcp: Google publishes no Cloud SQL price list readable without credentials; give the price by hand ({per_hour: 1.23, source: ...}), or set %s to a Cloud Billing API key to look it up", GCPKeyEnv)
	}
	base := l.o.GCPURL + "/v1/services/" + gcpCloudSQL + "/skus?currencyCode=USD&pageSize=5000"
	var skus []gcpSKU
	token := ""
	for page := 0; ; page++ {
		if page == gcpMaxPages {
			return nil, &ShapeError{List: gcpList, Field: "nextPageToken", Msg: fmt.Sprintf("still names a page after %d pages", gcpMaxPages)}
		}
		u := base + "&key=" + url.QueryEscape(l.o.GCPKey)
		if token != "" {
			u += "&pageToken=" + url.QueryEscape(token)
		}
		var ans struct {
			SKUs  *[]gcpItem `json:"skus"`
			Token string     `json:"nextPageToken"`
		}
		if err := l.getJSON(ctx, gcpList, u, &ans); err != nil {
			return nil, err
		}
		if ans.SKUs == nil {
			return nil, &ShapeError{List: gcpList, Field: "skus", Msg: "is missing from the answer"}
		}
		for i, it := range *ans.SKUs {
			s, keep, err := gcpSKUOf(it, fmt.Sprintf("skus[%d]", i))
			if err != nil {
				return nil, err
			}
			if keep {
				skus = append(skus, s)
			}
		}
		if token = ans.Token; token == "" {
			break
		}
	}
	data, err := json.Marshal(skus)
	if err != nil {
		return nil, err
	}
	return &entry{Source: base, Data: data}, nil
}

func gcpSKUOf(it gcpItem, at string) (gcpSKU, bool, error) {
	shape := func(field, msg string) error { return &ShapeError{List: gcpList, Field: at + "." + field, Msg: msg} }
	if it.Description == nil {
		return gcpSKU{}, false, shape("description", "is missing")
	}
	if !gcpSKUPattern.MatchString(*it.Description) || it.Category == nil || it.Category.UsageType != "OnDemand" {
		return gcpSKU{}, false, nil
	}
	if it.PricingInfo == nil || len(*it.PricingInfo) == 0 {
		return gcpSKU{}, false, shape("pricingInfo", "is missing")
	}
	info := (*it.PricingInfo)[0]
	if info.Expression == nil || info.Expression.UsageUnit == nil || info.Expression.Tiers == nil || len(*info.Expression.Tiers) == 0 {
		return gcpSKU{}, false, shape("pricingInfo[0].pricingExpression", "lacks usageUnit or tieredRates")
	}
	tier := (*info.Expression.Tiers)[0]
	if tier.UnitPrice == nil || tier.Start != 0 {
		return gcpSKU{}, false, shape("pricingInfo[0].pricingExpression.tieredRates[0]", "lacks a unitPrice from 0")
	}
	var units float64 // "" is 0, as the catalog leaves zeros out
	if tier.UnitPrice.Units != "" {
		var err error
		if units, err = strconv.ParseFloat(tier.UnitPrice.Units, 64); err != nil {
			return gcpSKU{}, false, shape("pricingInfo[0].pricingExpression.tieredRates[0].unitPrice.units", fmt.Sprintf("is %q, not a number", tier.UnitPrice.Units))
		}
	}
	return gcpSKU{Description: *it.Description, Regions: it.ServiceRegions, Unit: *info.Expression.UsageUnit,
		Price: units + float64(tier.UnitPrice.Nanos)/1e9, Currency: tier.UnitPrice.Currency, Effective: info.Effective}, true, nil
}
