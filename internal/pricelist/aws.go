package pricelist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
	"github.com/pgbakeoff/pgbakeoff/internal/suggest"
)

const awsList = "AWS Price List (Amazon RDS)"

// awsRow is one product of an RDS region offer file that PostgreSQL prices
// need, with its OnDemand price: the extract that is cached, since the
// region files are hundreds of megabytes.
type awsRow struct {
	SKU        string  `json:"sku"`
	Family     string  `json:"family"`              // Database Instance, Database Storage, Provisioned IOPS, Provisioned Throughput
	Instance   string  `json:"instance,omitempty"`  // db.m6g.4xlarge
	Deployment string  `json:"deployment"`          // Single-AZ or Multi-AZ
	Volume     string  `json:"volume,omitempty"`    // General Purpose-GP3
	Usage      string  `json:"usage,omitempty"`     // USE1-RDS:GP3-PIOPS
	Engine     string  `json:"engine"`              // PostgreSQL or Any
	Unit       string  `json:"unit"`                // Hrs, GB-Mo, IOPS-Mo, MiBps-Mo
	Price      float64 `json:"price"`               // per Unit, in Currency
	Currency   string  `json:"currency"`            // USD (CNY in China's regions)
	Effective  string  `json:"effective,omitempty"` // the term's effectiveDate
	Desc       string  `json:"desc,omitempty"`      // the price dimension's description
}

// awsExtract is what is kept of a region's offer file.
type awsExtract struct {
	Version     string   `json:"version"`
	Publication string   `json:"publicationDate"`
	Rows        []awsRow `json:"rows"`
}

// awsFamilies are the product families PostgreSQL prices are made of.
var awsFamilies = []string{"Database Instance", "Database Storage", "Provisioned IOPS", "Provisioned Throughput"}

// awsVolumes are the storage types as the price list names them.
var awsVolumes = map[string]string{
	"gp2": "General Purpose",
	"gp3": "General Purpose-GP3",
	"io1": "Provisioned IOPS",
	"io2": "Provisioned IOPS-IO2",
}

// awsInstanceUsage is the usage type of an instance's own hours:
// USE1-InstanceUsage:db.m6g.large, USE1-Multi-AZUsage:db.m6g.large.
var awsInstanceUsage = regexp.MustCompile(`(^|-)(InstanceUsage|Multi-AZUsage):db\.`)

var awsRegionPattern = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d$`)

func (l *Lister) aws(ctx context.Context, q Query, st Storage) (cost.Price, error) {
	switch strings.ToLower(q.Engine) {
	case "", "postgres", "postgresql":
	default:
		return cost.Price{}, fmt.Errorf("aws: engine %q is not PostgreSQL; pgbakeoff prices RDS for PostgreSQL (--engine postgres)", q.Engine)
	}
	if q.Instance == "" {
		return cost.Price{}, fmt.Errorf("aws: no instance class; give one such as db.m6g.4xlarge")
	}
	if !awsRegionPattern.MatchString(q.Region) {
		return cost.Price{}, fmt.Errorf("aws: region %q is not an AWS region code; give one such as us-east-1", q.Region)
	}
	what := "AWS price list of Amazon RDS for PostgreSQL in " + q.Region
	var x awsExtract
	e, err := l.list(ctx, "aws-rds-postgresql-"+q.Region+"-"+hostOf(l.o.AWSURL), what, func(ctx context.Context) (*entry, error) {
		return l.awsFetch(ctx, q.Region)
	}, &x)
	if err != nil {
		return cost.Price{}, err
	}
	p, err := awsPrice(x, q, st)
	if err != nil {
		return cost.Price{}, err
	}
	p.Source = fmt.Sprintf("%s, offer file %s (version %s), %s", awsList, e.Source, x.Version, p.Source)
	p.Fetched = e.fetched()
	return p, nil
}

// awsFetch reads the offer index, the RDS region index and the region's
// offer file, keeping only what PostgreSQL prices need.
func (l *Lister) awsFetch(ctx context.Context, region string) (*entry, error) {
	var index struct {
		Offers map[string]struct {
			RegionIndex *string `json:"currentRegionIndexUrl"`
		} `json:"offers"`
	}
	if err := l.getJSON(ctx, awsList, l.o.AWSURL+"/offers/v1.0/aws/index.json", &index); err != nil {
		return nil, err
	}
	rds, ok := index.Offers["AmazonRDS"]
	if !ok || rds.RegionIndex == nil {
		return nil, &ShapeError{List: awsList, Field: "offers.AmazonRDS.currentRegionIndexUrl", Msg: "is missing from the offer index"}
	}
	var regions struct {
		Regions map[string]struct {
			URL *string `json:"currentVersionUrl"`
		} `json:"regions"`
	}
	if err := l.getJSON(ctx, awsList, l.o.AWSURL+*rds.RegionIndex, &regions); err != nil {
		return nil, err
	}
	if regions.Regions == nil {
		return nil, &ShapeError{List: awsList, Field: "regions", Msg: "is missing from the region index"}
	}
	r, ok := regions.Regions[region]
	if !ok {
		return nil, &NotFoundError{What: "Amazon RDS prices", Where: "region " + region, Nearest: suggest.Nearest(region, sortedKeys(regions.Regions), 5)}
	}
	if r.URL == nil {
		return nil, &ShapeError{List: awsList, Field: "regions." + region + ".currentVersionUrl", Msg: "is missing from the region index"}
	}
	u := l.o.AWSURL + *r.URL
	body, err := l.get(ctx, u)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	x, err := readAWSOffer(body)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(x.Rows, func(r awsRow) bool { return r.Family == "Database Instance" }) {
		return nil, &NotFoundError{What: "PostgreSQL instances", Where: "Amazon RDS in " + region}
	}
	data, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	return &entry{Source: u, Version: x.Version, Data: data}, nil
}

// awsProduct is a product of an offer file.
type awsProduct struct {
	SKU        string            `json:"sku"`
	Family     string            `json:"productFamily"`
	Attributes map[string]string `json:"attributes"`
}

// awsTerm is an OnDemand term of an offer file.
type awsTerm struct {
	Effective  string `json:"effectiveDate"`
	Dimensions map[string]struct {
		Unit        *string           `json:"unit"`
		Price       map[string]string `json:"pricePerUnit"`
		Description string            `json:"description"`
		BeginRange  string            `json:"beginRange"`
	} `json:"priceDimensions"`
}

// readAWSOffer streams an offer file, keeping the PostgreSQL products and
// their OnDemand prices. Objects are walked key by key down to each product
// and each product's terms, and what is not kept is skipped value by value, so
// memory stays small whatever the file's size.
func readAWSOffer(r io.Reader) (awsExtract, error) {
	var x awsExtract
	dec := json.NewDecoder(r)
	bad := func(field string, err error) error {
		var shape *ShapeError
		var fe *fetchError
		switch {
		case errors.As(err, &shape):
			return err
		case errors.As(err, &fe):
			return fe.error
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return fmt.Errorf("%s: the offer file ended early, at %s: %w", awsList, field, err)
		}
		return shapeOf(awsList, field, err)
	}
	// each calls fn with each key of the object that comes next, fn reading
	// its value.
	each := func(field string, fn func(key string) error) error {
		t, err := dec.Token()
		if err != nil {
			return bad(field, err)
		}
		if d, ok := t.(json.Delim); !ok || d != '{' {
			return &ShapeError{List: awsList, Field: field, Msg: "is not an object"}
		}
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return bad(field, err)
			}
			k, ok := t.(string)
			if !ok {
				return &ShapeError{List: awsList, Field: field, Msg: "has a key that is not a string"}
			}
			if err := fn(k); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // the closing brace
			return bad(field, err)
		}
		return nil
	}
	decode := func(field string, v any) error {
		if err := dec.Decode(v); err != nil {
			return bad(field, err)
		}
		return nil
	}
	skip := func(field string) error {
		var raw json.RawMessage
		return decode(field, &raw)
	}

	kept := map[string]awsRow{}
	var sawProducts, sawTerms bool
	err := each("the offer file", func(k string) error {
		switch k {
		case "version":
			return decode(k, &x.Version)
		case "publicationDate":
			return decode(k, &x.Publication)
		case "products":
			sawProducts = true
			return each("products", func(sku string) error {
				var p awsProduct
				if err := decode("products."+sku, &p); err != nil {
					return err
				}
				if row, ok := awsKeep(p); ok {
					row.SKU = sku
					kept[sku] = row
				}
				return nil
			})
		case "terms":
			sawTerms = true
			if !sawProducts {
				// Terms are kept for the products kept, so products come first,
				// as they always have.
				return &ShapeError{List: awsList, Field: "terms", Msg: "comes before products"}
			}
			return each("terms", func(kind string) error {
				return each("terms."+kind, func(sku string) error {
					at := "terms." + kind + "." + sku
					row, ok := kept[sku]
					if kind != "OnDemand" || !ok {
						return skip(at)
					}
					var terms map[string]awsTerm
					if err := decode(at, &terms); err != nil {
						return err
					}
					priced, err := awsPriced(row, terms)
					x.Rows = append(x.Rows, priced...)
					return err
				})
			})
		}
		return skip(k)
	})
	switch {
	case err != nil:
		return x, err
	case !sawProducts:
		return x, &ShapeError{List: awsList, Field: "products", Msg: "is missing from the offer file"}
	case !sawTerms:
		return x, &ShapeError{List: awsList, Field: "terms", Msg: "is missing from the offer file"}
	case x.Version == "":
		return x, &ShapeError{List: awsList, Field: "version", Msg: "is missing from the offer file"}
	case len(kept) > 0 && len(x.Rows) == 0:
		return x, &ShapeError{List: awsList, Field: "terms.OnDemand", Msg: fmt.Sprintf("prices none of the %d PostgreSQL products", len(kept))}
	}
	return x, nil
}

// awsKeep is whether a product is one PostgreSQL prices need, as a row
// without its price.
func awsKeep(p awsProduct) (awsRow, bool) {
	a := p.Attributes
	if !slices.Contains(awsFamilies, p.Family) {
		return awsRow{}, false
	}
	engine := a["databaseEngine"]
	switch {
	case engine != "PostgreSQL" && (engine != "Any" || p.Family == "Database Instance"):
		return awsRow{}, false
	case a["deploymentOption"] != "Single-AZ" && a["deploymentOption"] != "Multi-AZ":
		return awsRow{}, false // Multi-AZ DB clusters, Outposts and the like are priced otherwise
	case a["locationType"] != "" && a["locationType"] != "AWS Region":
		return awsRow{}, false
	}
	return awsRow{Family: p.Family, Instance: a["instanceType"], Deployment: a["deploymentOption"],
		Volume: a["volumeType"], Usage: a["usagetype"], Engine: engine}, true
}

// awsPriced gives row its OnDemand prices, a row each (one, but for tiers).
func awsPriced(row awsRow, terms map[string]awsTerm) ([]awsRow, error) {
	var out []awsRow
	for code, t := range terms {
		for rc, d := range t.Dimensions {
			at := "terms.OnDemand." + row.SKU + "." + code + ".priceDimensions." + rc
			if d.Unit == nil {
				return nil, &ShapeError{List: awsList, Field: at + ".unit", Msg: "is missing"}
			}
			if len(d.Price) != 1 {
				return nil, &ShapeError{List: awsList, Field: at + ".pricePerUnit", Msg: fmt.Sprintf("has %d currencies, where it had one", len(d.Price))}
			}
			if d.BeginRange != "" && d.BeginRange != "0" {
				continue // a tier above the first
			}
			for cur, s := range d.Price {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || v < 0 {
					return nil, &ShapeError{List: awsList, Field: at + ".pricePerUnit." + cur, Msg: fmt.Sprintf("is %q, not a price", s)}
				}
				r := row
				r.Unit, r.Price, r.Currency, r.Effective, r.Desc = *d.Unit, v, cur, t.Effective, d.Description
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// awsPrice prices q from a region's extract.
func awsPrice(x awsExtract, q Query, st Storage) (cost.Price, error) {
	single, used, err := awsDeployment(x, q, st, "Single-AZ")
	if err != nil {
		return cost.Price{}, err
	}
	single.Source = strings.Join(used, "; ")
	single.Date = newest([]string{x.Publication})
	if single.Date == "" { // files of before 2018 have no publicationDate
		single.Date = newest(dates(x))
	}
	if !q.HA {
		return single, nil
	}
	multi, usedMulti, err := awsDeployment(x, q, st, "Multi-AZ")
	if err != nil {
		return cost.Price{}, err
	}
	// The standby is what Multi-AZ costs beyond Single-AZ, as the list
	// prices each.
	single.HAMonthly = roundMicro(multi.Monthly() - single.Monthly())
	if single.HAMonthly <= 0 {
		return cost.Price{}, fmt.Errorf("aws: %s costs no more Multi-AZ than Single-AZ in %s's price list; report this as a bug", q.Instance, q.Region)
	}
	single.Source += "; Multi-AZ: " + strings.Join(usedMulti, "; ")
	return single, nil
}

// awsDeployment prices q's instance and storage as deployed once, Single-AZ
// or Multi-AZ, and names the rows used.
func awsDeployment(x awsExtract, q Query, st Storage, deployment string) (cost.Price, []string, error) {
	var used []string
	find := func(what, unit string, match func(awsRow) bool) (awsRow, error) {
		var found []awsRow
		for _, r := range x.Rows {
			if r.Deployment == deployment && match(r) {
				found = append(found, r)
			}
		}
		if len(found) == 0 {
			return awsRow{}, &NotFoundError{What: deployment + " " + what, Where: "Amazon RDS for PostgreSQL in " + q.Region}
		}
		// An instance's own hours over other rows of its class (such as
		// Extended Support), when the list has both.
		if usual := slices.DeleteFunc(slices.Clone(found), func(r awsRow) bool {
			return r.Family == "Database Instance" && !awsInstanceUsage.MatchString(r.Usage)
		}); len(usual) > 0 {
			found = usual
		}
		// PostgreSQL's own row over one for any engine; then by SKU, so that
		// the row named is the same each time.
		slices.SortFunc(found, func(a, b awsRow) int {
			if c := boolInt(b.Engine == "PostgreSQL") - boolInt(a.Engine == "PostgreSQL"); c != 0 {
				return c
			}
			return strings.Compare(a.SKU, b.SKU)
		})
		r := found[0]
		for _, o := range found[1:] {
			if o.Engine == r.Engine && o.Price != r.Price {
				return awsRow{}, fmt.Errorf("aws: %s %s in %s has more than one price (%s %v, %s %v); report this as a bug", deployment, what, q.Region, r.Usage, r.Price, o.Usage, o.Price)
			}
		}
		if r.Unit != unit {
			return awsRow{}, &ShapeError{List: awsList, Field: "terms.OnDemand." + r.SKU + " unit", Msg: fmt.Sprintf("is %q where %s was priced per %s", r.Unit, what, unit)}
		}
		if r.Price <= 0 {
			return awsRow{}, &ShapeError{List: awsList, Field: "terms.OnDemand." + r.SKU + " pricePerUnit", Msg: fmt.Sprintf("prices %s at 0", what)}
		}
		used = append(used, fmt.Sprintf("%s (%s %s)", r.Desc, r.SKU, r.Usage))
		return r, nil
	}

	inst, err := find("instance "+q.Instance, "Hrs", func(r awsRow) bool {
		return r.Family == "Database Instance" && strings.EqualFold(r.Instance, q.Instance)
	})
	var nf *NotFoundError
	if errors.As(err, &nf) {
		var classes []string
		for _, r := range x.Rows {
			if r.Family == "Database Instance" && r.Deployment == deployment {
				classes = append(classes, r.Instance)
			}
		}
		slices.Sort(classes)
		nf.What, nf.Nearest = "instance class "+q.Instance, suggest.Nearest(q.Instance, slices.Compact(classes), 5)
		return cost.Price{}, nil, nf
	}
	if err != nil {
		return cost.Price{}, nil, err
	}
	p := cost.Price{ComputePerHour: inst.Price, Currency: inst.Currency}
	if st.GiB == 0 {
		return p, used, nil
	}

	kind := st.Type
	if kind == "" {
		kind = "gp3"
	}
	volume, ok := awsVolumes[kind]
	if !ok {
		return cost.Price{}, nil, fmt.Errorf("aws: storage type %q is not one pgbakeoff prices; want gp2, gp3, io1 or io2", st.Type)
	}
	// Which IOPS and throughput rows are this type's: by usage type.
	mark := map[string]string{"gp3": "GP3", "io2": "IO2"}[kind]
	ofKind := func(r awsRow) bool {
		if mark != "" {
			return strings.Contains(strings.ToUpper(r.Usage), mark)
		}
		return !strings.Contains(strings.ToUpper(r.Usage), "GP3") && !strings.Contains(strings.ToUpper(r.Usage), "IO2")
	}
	storage, err := find(kind+" storage", "GB-Mo", func(r awsRow) bool {
		return r.Family == "Database Storage" && r.Volume == volume
	})
	if err != nil {
		return cost.Price{}, nil, err
	}
	p.StorageGB, p.StoragePerGBMonth = st.GiB, storage.Price

	var freeIOPS, freeMBps float64
	switch kind {
	case "gp2":
		if st.IOPS > 0 || st.MBps > 0 {
			return cost.Price{}, nil, fmt.Errorf("aws: gp2 storage has no provisioned IOPS or throughput; leave them out, or use gp3 or io1")
		}
		return p, used, nil
	case "gp3":
		// The baseline that comes with the volume (RDS for PostgreSQL); below
		// 400 GiB it is all there is.
		freeIOPS, freeMBps = 3000, 125
		if st.GiB >= 400 {
			freeIOPS, freeMBps = 12000, 500
		} else if st.IOPS > freeIOPS || st.MBps > freeMBps {
			return cost.Price{}, nil, fmt.Errorf("aws: gp3 below 400 GiB comes with 3,000 IOPS and 125 MiB/s and RDS provisions no more; give 400GiB or more, or io1 or io2")
		}
	default:
		if st.IOPS == 0 {
			return cost.Price{}, nil, fmt.Errorf("aws: %s storage needs its provisioned IOPS, as in %s:%sGiB:10000iops", kind, kind, number(st.GiB))
		}
		if st.MBps > 0 {
			return cost.Price{}, nil, fmt.Errorf("aws: %s storage has no provisioned throughput; leave it out", kind)
		}
	}
	if extra := st.IOPS - freeIOPS; extra > 0 {
		r, err := find(kind+" provisioned IOPS", "IOPS-Mo", func(r awsRow) bool { return r.Family == "Provisioned IOPS" && ofKind(r) })
		if err != nil {
			return cost.Price{}, nil, err
		}
		p.IOPS, p.PerIOPSMonth = extra, r.Price
	}
	if extra := st.MBps - freeMBps; st.MBps > 0 && extra > 0 {
		r, err := find(kind+" provisioned throughput", "MiBps-Mo", func(r awsRow) bool { return r.Family == "Provisioned Throughput" && ofKind(r) })
		if err != nil {
			return cost.Price{}, nil, err
		}
		p.ThroughputMBps, p.PerMBpsMonth = extra, r.Price
	}
	return p, used, nil
}

// dates are the effective dates of x's terms.
func dates(x awsExtract) []string {
	var d []string
	for _, r := range x.Rows {
		d = append(d, r.Effective)
	}
	return d
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
