package pricelist

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
	"github.com/pgbakeoff/pgbakeoff/internal/suggest"
)

const (
	azureList    = "Azure Retail Prices API"
	azureService = "Azure Database for PostgreSQL"
	// azureStorageProduct is the flexible server's storage meters' product.
	azureStorageProduct = "Az DB for PostgreSQL Flexible Server Storage"
	azureMaxPages       = 200 // a region's PostgreSQL meters are a few pages
)

// AzureServices are the Azure services Price knows.
var AzureServices = []string{"flexible-server"}

// azureMeter is one price of the Retail Prices API, as cached: the fields
// pricing needs, all of which the API gives.
type azureMeter struct {
	Product   string  `json:"product"`
	SKU       string  `json:"sku"`
	Meter     string  `json:"meter"`
	ArmSKU    string  `json:"armSku,omitempty"`
	Unit      string  `json:"unit"`
	Price     float64 `json:"price"`
	Currency  string  `json:"currency"`
	TierMin   float64 `json:"tierMin,omitempty"`
	Effective string  `json:"effective"`
	Primary   bool    `json:"primary"`
	Region    string  `json:"region"`
}

// azureItem is an item of the API's answer; the pointers are the fields a
// price cannot be made without.
type azureItem struct {
	CurrencyCode  *string  `json:"currencyCode"`
	TierMin       *float64 `json:"tierMinimumUnits"`
	RetailPrice   *float64 `json:"retailPrice"`
	ArmRegionName string   `json:"armRegionName"`
	Effective     *string  `json:"effectiveStartDate"`
	MeterName     *string  `json:"meterName"`
	ProductName   *string  `json:"productName"`
	SkuName       *string  `json:"skuName"`
	Unit          *string  `json:"unitOfMeasure"`
	Type          *string  `json:"type"`
	Primary       *bool    `json:"isPrimaryMeterRegion"`
	ArmSkuName    string   `json:"armSkuName"`
}

type azurePage struct {
	Items        *[]azureItem `json:"Items"`
	NextPageLink *string      `json:"NextPageLink"`
}

var (
	azureRegionPattern = regexp.MustCompile(`^[a-z][a-z0-9]{1,40}$`)
	currencyPattern    = regexp.MustCompile(`^[A-Z]{3}$`)
	// azureSeriesName reads a series: Dadsv5 is D, ads, 5.
	azureSeriesName = regexp.MustCompile(`^([A-Za-z])([a-z]*)v(\d+)$`)
)

func (l *Lister) azure(ctx context.Context, q Query, st Storage) (cost.Price, error) {
	if q.Service == "" {
		q.Service = "flexible-server"
	}
	if q.Service != "flexible-server" {
		return cost.Price{}, fmt.Errorf("azure: unknown service %q; pgbakeoff prices %s", q.Service, strings.Join(AzureServices, ", "))
	}
	if q.SKU == "" {
		return cost.Price{}, fmt.Errorf("azure: no SKU; give the server's compute size such as Standard_D16ads_v5 or Standard_B1ms")
	}
	if !azureRegionPattern.MatchString(q.Region) {
		return cost.Price{}, fmt.Errorf("azure: region %q is not an Azure region name; give one such as eastus or westeurope", q.Region)
	}
	currency := q.Currency
	if currency == "" {
		currency = cost.DefaultCurrency
	}
	if !currencyPattern.MatchString(currency) {
		return cost.Price{}, fmt.Errorf("azure: currency %q is not a currency code such as USD or EUR", currency)
	}
	filter := fmt.Sprintf("serviceName eq '%s' and armRegionName eq '%s' and priceType eq 'Consumption'", azureService, q.Region)
	first := l.o.AzureURL + "?currencyCode='" + currency + "'&$filter=" + url.PathEscape(filter)
	what := fmt.Sprintf("Azure price list of %s in %s (%s)", azureService, q.Region, currency)
	var meters []azureMeter
	e, err := l.list(ctx, "azure-postgresql-"+q.Region+"-"+currency+"-"+hostOf(l.o.AzureURL), what, func(ctx context.Context) (*entry, error) {
		meters, err := l.azurePages(ctx, first)
		if err != nil {
			return nil, err
		}
		if len(meters) == 0 {
			return nil, l.azureNoRegion(ctx, q.Region, currency)
		}
		data, err := json.Marshal(meters)
		if err != nil {
			return nil, err
		}
		return &entry{Source: first, Data: data}, nil
	}, &meters)
	if err != nil {
		return cost.Price{}, err
	}
	p, err := azurePrice(meters, q, st)
	if err != nil {
		return cost.Price{}, err
	}
	p.Source = fmt.Sprintf("%s (%s), %s", azureList, hostOf(e.Source), p.Source)
	p.Fetched = e.fetched()
	return p, nil
}

// azurePages reads the answer to first and the pages its NextPageLinks name.
func (l *Lister) azurePages(ctx context.Context, first string) ([]azureMeter, error) {
	base, err := url.Parse(first)
	if err != nil {
		return nil, err
	}
	var meters []azureMeter
	next := first
	for page := 0; next != ""; page++ {
		if page == azureMaxPages {
			return nil, &ShapeError{List: azureList, Field: "NextPageLink", Msg: fmt.Sprintf("still names a page after %d pages", azureMaxPages)}
		}
		if u, err := url.Parse(next); err != nil || u.Host != base.Host {
			return nil, &ShapeError{List: azureList, Field: "NextPageLink", Msg: fmt.Sprintf("%q is not a page of %s", next, base.Host)}
		}
		var pg azurePage
		if err := l.getJSON(ctx, azureList, next, &pg); err != nil {
			return nil, err
		}
		if pg.Items == nil {
			return nil, &ShapeError{List: azureList, Field: "Items", Msg: "is missing from the answer"}
		}
		for i, it := range *pg.Items {
			m, err := azureMeterOf(it, fmt.Sprintf("Items[%d]", len(meters)+i))
			if err != nil {
				return nil, err
			}
			meters = append(meters, m)
		}
		next = ""
		if pg.NextPageLink != nil {
			next = *pg.NextPageLink
		}
	}
	return meters, nil
}

func azureMeterOf(it azureItem, at string) (azureMeter, error) {
	for _, f := range []struct {
		name  string
		given bool
	}{
		{"retailPrice", it.RetailPrice != nil}, {"unitOfMeasure", it.Unit != nil}, {"meterName", it.MeterName != nil},
		{"productName", it.ProductName != nil}, {"skuName", it.SkuName != nil}, {"type", it.Type != nil},
		{"effectiveStartDate", it.Effective != nil}, {"currencyCode", it.CurrencyCode != nil},
	} {
		if !f.given {
			return azureMeter{}, &ShapeError{List: azureList, Field: at + "." + f.name, Msg: "is missing"}
		}
	}
	m := azureMeter{
		Product: *it.ProductName, SKU: *it.SkuName, Meter: *it.MeterName, ArmSKU: it.ArmSkuName,
		Unit: *it.Unit, Price: *it.RetailPrice, Currency: *it.CurrencyCode, Effective: *it.Effective,
		Primary: it.Primary == nil || *it.Primary, Region: it.ArmRegionName,
	}
	if it.TierMin != nil {
		m.TierMin = *it.TierMin
	}
	if *it.Type != "Consumption" {
		return azureMeter{}, &ShapeError{List: azureList, Field: at + ".type", Msg: fmt.Sprintf("is %q where the filter asked for Consumption", *it.Type)}
	}
	if m.Price < 0 {
		return azureMeter{}, &ShapeError{List: azureList, Field: at + ".retailPrice", Msg: fmt.Sprintf("is negative (%v)", m.Price)}
	}
	return m, nil
}

// azureNoRegion is the error for a region with no meters: the regions the
// flexible server's storage is priced in, nearest first.
func (l *Lister) azureNoRegion(ctx context.Context, region, currency string) error {
	filter := fmt.Sprintf("serviceName eq '%s' and priceType eq 'Consumption' and productName eq '%s' and meterName eq 'Storage Data Stored'", azureService, azureStorageProduct)
	meters, err := l.azurePages(ctx, l.o.AzureURL+"?currencyCode='"+currency+"'&$filter="+url.PathEscape(filter))
	nf := &NotFoundError{What: "prices", Where: fmt.Sprintf("%s in region %s", azureService, region)}
	if err != nil {
		nf.Hint = "the list of regions could not be read either: " + err.Error()
		return nf
	}
	var regions []string
	for _, m := range meters {
		regions = append(regions, m.Region)
	}
	nf.Nearest = suggest.Nearest(region, regions, 5)
	return nf
}

// azureSeries reads a flexible server compute product's tier and series:
// "Azure Database for PostgreSQL Flexible Server General Purpose Ddsv5
// Series Compute" is General Purpose, Ddsv5.
var azureSeries = regexp.MustCompile(`(?i)flexible server\s+(?:-\s*)?(burstable|general purpose|memory optimized)\s+(?:-\s*)?(\S+)\s+series\s+compute`)

// azureSKUParts reads a VM-style SKU: Standard_D16ads_v5 is D, 16, ads, 5;
// Standard_B1ms is B, 1, ms and no version.
var azureSKUParts = regexp.MustCompile(`(?i)^(?:standard_)?([a-z])(\d+)([a-z]*)(?:_v(\d+))?$`)

// azureVCore is a whole server's compute meter's SKU: "16 vCore".
var azureVCore = regexp.MustCompile(`^(\d+) vCore$`)

// azureCompute is a compute meter that prices sku, and how many of it the
// server takes: 1 for a whole server's meter, the vCores for a per-vCore one.
type azureCompute struct {
	m     azureMeter
	count float64
}

// azureSKUName is the VM-style name of a compute meter's server,
// "Standard_D16ads_v5", or "" when the meter prices a vCore of any size.
func azureSKUName(m azureMeter) string {
	if strings.HasPrefix(m.ArmSKU, "Standard_") {
		return m.ArmSKU
	}
	sm := azureSeries.FindStringSubmatch(m.Product)
	if sm == nil {
		return ""
	}
	if strings.EqualFold(sm[1], "burstable") && m.SKU != "" {
		return "Standard_" + m.SKU[:1] + strings.ToLower(m.SKU[1:])
	}
	series := azureSeriesName.FindStringSubmatch(sm[2])
	vc := azureVCore.FindStringSubmatch(m.SKU)
	if series == nil || vc == nil {
		return ""
	}
	return fmt.Sprintf("Standard_%s%s%s_v%s", series[1], vc[1], series[2], series[3])
}

// findAzureCompute finds the meter that prices sku's compute.
func findAzureCompute(meters []azureMeter, sku, region string) (azureCompute, error) {
	parts := azureSKUParts.FindStringSubmatch(sku)
	var found []azureCompute
	var names []string
	for _, m := range meters {
		if !azureSeries.MatchString(m.Product) || m.TierMin > 0 {
			continue
		}
		name := azureSKUName(m)
		if name != "" {
			names = append(names, name)
		}
		switch {
		case name != "" && (strings.EqualFold(name, sku) || strings.EqualFold(name, "Standard_"+sku)):
			found = append(found, azureCompute{m, 1})
		case m.SKU == "vCore" && parts != nil:
			// A vCore of the series, whatever the size.
			series := azureSeries.FindStringSubmatch(m.Product)[2]
			if strings.EqualFold(series, parts[1]+parts[3]+"v"+parts[4]) {
				n, _ := strconv.ParseFloat(parts[2], 64)
				found = append(found, azureCompute{m, n})
			}
		}
	}
	if len(found) == 0 {
		return azureCompute{}, &NotFoundError{What: "SKU " + sku, Where: fmt.Sprintf("%s flexible server in %s", azureService, region),
			Nearest: suggest.Nearest(sku, names, 5)}
	}
	// A meter of this region's own over one billed elsewhere.
	best := found[:0:0]
	for _, c := range found {
		if c.m.Primary {
			best = append(best, c)
		}
	}
	if len(best) == 0 {
		best = found
	}
	for _, c := range best[1:] {
		if c.m.Price*c.count != best[0].m.Price*best[0].count {
			return azureCompute{}, fmt.Errorf("azure: SKU %s in %s has more than one compute price (%s: %v, %s: %v); report this, with the SKU and region, as a bug",
				sku, region, best[0].m.Product, best[0].m.Price, c.m.Product, c.m.Price)
		}
	}
	return best[0], nil
}

// azureStorageKinds are the flexible server's storage types: their
// capacity, IOPS and throughput meters, and what comes without charge.
var azureStorageKinds = map[string]struct {
	capacity, iops, throughput string
	freeIOPS                   func(gib float64) float64
	freeMBps                   float64
}{
	"premium-ssd": {
		capacity: "Storage Data Stored", iops: "IOPS Scaling Provisioned IOPS",
		freeIOPS: premiumSSDIOPS,
	},
	"premium-ssd-v2": {
		capacity: "Premium Managed Disk V2 Data Stored", iops: "PMD V2 IOPS Provisioned IOPS",
		throughput: "PMD V2 Throughput Prov Throughput (MBps)",
		freeIOPS:   func(float64) float64 { return 3000 }, freeMBps: 125,
	},
}

// premiumSSDIOPS is the IOPS a Premium SSD disk of that size comes with
// (its performance tier, P4 to P80); more are provisioned at a price.
func premiumSSDIOPS(gib float64) float64 {
	tiers := []struct{ gib, iops float64 }{
		{32, 120}, {64, 240}, {128, 500}, {256, 1100}, {512, 2300}, {1024, 5000},
		{2048, 7500}, {4096, 7500}, {8192, 16000}, {16384, 18000}, {32768, 20000},
	}
	for _, t := range tiers {
		if gib <= t.gib {
			return t.iops
		}
	}
	return 20000
}

// findAzureMeter finds the storage product's meter called meter.
func findAzureMeter(meters []azureMeter, meter string) (azureMeter, bool) {
	var found []azureMeter
	for _, m := range meters {
		if m.Product == azureStorageProduct && m.Meter == meter && m.TierMin == 0 {
			found = append(found, m)
		}
	}
	for _, m := range found {
		if m.Primary {
			return m, true
		}
	}
	if len(found) > 0 {
		return found[0], true
	}
	return azureMeter{}, false
}

// azureUnit reads a unit of measure: how many units the price is for and
// whether it is by the hour or by the month ("1 Hour", "1 GB/Month",
// "1 GiB/Month", "1/Month", "100 Hours").
func azureUnit(m azureMeter, at string) (count float64, hourly bool, err error) {
	u := strings.TrimSpace(m.Unit)
	i := strings.IndexFunc(u, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, false, &ShapeError{List: azureList, Field: at + ".unitOfMeasure", Msg: fmt.Sprintf("%q of meter %q has no count", m.Unit, m.Meter)}
	}
	count, _ = strconv.ParseFloat(u[:i], 64)
	switch rest := strings.TrimSpace(u[i:]); rest {
	case "Hour", "Hours":
		return count, true, nil
	case "GB/Month", "GiB/Month", "/Month":
		return count, false, nil
	}
	return 0, false, &ShapeError{List: azureList, Field: at + ".unitOfMeasure", Msg: fmt.Sprintf("%q of meter %q is not a unit pgbakeoff knows", m.Unit, m.Meter)}
}

func azurePrice(meters []azureMeter, q Query, st Storage) (cost.Price, error) {
	c, err := findAzureCompute(meters, q.SKU, q.Region)
	if err != nil {
		return cost.Price{}, err
	}
	count, hourly, err := azureUnit(c.m, "compute meter")
	if err != nil {
		return cost.Price{}, err
	}
	if !hourly {
		return cost.Price{}, &ShapeError{List: azureList, Field: "compute meter's unitOfMeasure", Msg: fmt.Sprintf("%q of %s is not by the hour", c.m.Unit, c.m.Product)}
	}
	p := cost.Price{ComputePerHour: c.m.Price * c.count / count, Currency: c.m.Currency}
	what := fmt.Sprintf("%s %s", c.m.Product, c.m.SKU)
	if c.count != 1 {
		what += fmt.Sprintf(" x %s vCores", number(c.count))
	}
	used := []string{what}
	dates := []string{c.m.Effective}

	if st.GiB > 0 {
		kind := st.Type
		if kind == "" || kind == "premium" || kind == "premium-ssd-v1" {
			kind = "premium-ssd"
		}
		k, ok := azureStorageKinds[kind]
		if !ok {
			return cost.Price{}, fmt.Errorf("azure: storage type %q is not one flexible server has; want premium-ssd (the default) or premium-ssd-v2", st.Type)
		}
		if k.throughput == "" && st.MBps > 0 {
			return cost.Price{}, fmt.Errorf("azure: %s has no provisioned throughput; leave it out, or use premium-ssd-v2", kind)
		}
		per := func(meter string) (float64, error) {
			m, ok := findAzureMeter(meters, meter)
			if !ok {
				return 0, &NotFoundError{What: "meter " + meter, Where: fmt.Sprintf("%s in %s", azureStorageProduct, q.Region)}
			}
			n, hourly, err := azureUnit(m, "meter "+meter)
			if err != nil {
				return 0, err
			}
			if hourly {
				return 0, &ShapeError{List: azureList, Field: "unitOfMeasure of meter " + meter, Msg: fmt.Sprintf("%q is by the hour, not by the month", m.Unit)}
			}
			if m.Price <= 0 {
				return 0, &ShapeError{List: azureList, Field: "retailPrice of meter " + meter, Msg: "is 0"}
			}
			used = append(used, azureStorageProduct+" "+meter)
			dates = append(dates, m.Effective)
			return m.Price / n, nil
		}
		if p.StoragePerGBMonth, err = per(k.capacity); err != nil {
			return cost.Price{}, err
		}
		p.StorageGB = st.GiB
		if extra := st.IOPS - k.freeIOPS(st.GiB); st.IOPS > 0 && extra > 0 {
			if p.PerIOPSMonth, err = per(k.iops); err != nil {
				return cost.Price{}, err
			}
			p.IOPS = extra
		}
		if extra := st.MBps - k.freeMBps; st.MBps > 0 && extra > 0 {
			if p.PerMBpsMonth, err = per(k.throughput); err != nil {
				return cost.Price{}, err
			}
			p.ThroughputMBps = extra
		}
	}
	if q.HA {
		// A standby is billed as the primary: compute and storage again.
		p.HAMonthly = roundMicro(p.Monthly())
	}
	p.Source = fmt.Sprintf("%s, Consumption: %s", q.Region, strings.Join(used, "; "))
	if q.HA {
		p.Source += "; high availability: a standby billed as the primary"
	}
	p.Date = newest(dates)
	return p, nil
}
