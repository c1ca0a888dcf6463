package pricelist

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
)

// Clouds are the clouds whose price lists Price reads.
var Clouds = []string{"azure", "aws", "gcp"}

// DefaultMaxAge is how old a cached list may be before it is fetched anew;
// an older one is still used, with a warning, when the list cannot be
// fetched or Offline is set.
const DefaultMaxAge = 7 * 24 * time.Hour

// Query is a deployment to price. Which fields count depends on Cloud.
type Query struct {
	Cloud  string // azure, aws or gcp
	Region string // eastus, us-east-1, us-central1

	Service string // azure: flexible-server
	SKU     string // azure: Standard_D16ads_v5; gcp: db-custom-16-65536

	Engine   string // aws: postgres
	Instance string // aws: db.m6g.4xlarge

	Storage string // ParseStorage's spec: 1TiB, gp3:1000GiB:12000iops
	// HA prices a standby: Azure's high availability, AWS's Multi-AZ
	// (one standby), Cloud SQL's regional instance.
	HA bool

	Currency string // azure only: a currency the Retail Prices API has; "" is USD
}

// QueryField is a field a query gives, as a study file's price names it
// (Key) and as the prices command does (Flag).
type QueryField struct {
	Key, Flag, Value string
	Switch           bool // a flag without a value: HA, whose Value is "true"
}

// Fields are the fields q gives, in the order the prices command shows them.
func (q Query) Fields() []QueryField {
	var fs []QueryField
	add := func(key, value string) {
		if value != "" {
			fs = append(fs, QueryField{Key: key, Flag: key, Value: value})
		}
	}
	add("service", q.Service)
	if q.Cloud == "gcp" {
		add("tier", q.SKU)
	} else {
		add("sku", q.SKU)
	}
	add("engine", q.Engine)
	add("instance", q.Instance)
	add("storage", q.Storage)
	if q.HA {
		// High availability: multi-az on AWS, ha elsewhere.
		f := QueryField{Key: "ha", Flag: "ha", Value: "true", Switch: true}
		if q.Cloud == "aws" {
			f.Key, f.Flag = "multi_az", "multi-az"
		}
		fs = append(fs, f)
	}
	add("region", q.Region)
	add("currency", q.Currency)
	return fs
}

// String is the query as the prices command takes it, for messages.
func (q Query) String() string {
	parts := []string{q.Cloud}
	for _, f := range q.Fields() {
		if f.Switch {
			parts = append(parts, "--"+f.Flag)
		} else {
			parts = append(parts, "--"+f.Flag+" "+f.Value)
		}
	}
	return strings.Join(parts, " ")
}

// Key identifies the query for what is stored of its answer: every field,
// whatever String shows of them.
func (q Query) Key() string {
	data, _ := json.Marshal(q) // a struct of strings and a bool
	return string(data)
}

// Options set where lists come from and how the cache is used. The zero
// value reads the live lists and caches them in the user's cache directory.
type Options struct {
	CacheDir string        // "" is <user cache dir>/pgbakeoff/prices
	Offline  bool          // the cache only: no network
	MaxAge   time.Duration // 0 is DefaultMaxAge
	HTTP     *http.Client  // nil is a client with time limits on connecting and on the answer's start

	// The lists' addresses, for tests against recorded responses; "" is the
	// live one.
	AzureURL string // https://prices.azure.com/api/retail/prices
	AWSURL   string // https://pricing.us-east-1.amazonaws.com
	GCPURL   string // https://cloudbilling.googleapis.com

	// GCPKey is an API key for the Cloud Billing Catalog. It is sent to
	// Google alone and appears in no message, cache or source.
	GCPKey string

	Now  func() time.Time // nil is time.Now
	Warn func(string)     // a stale or fallen-back list; nil drops warnings
}

// Lister looks prices up. It is safe for use by several goroutines.
type Lister struct {
	o Options
	// seen holds the lists read in this process by their keys, and failed
	// those that could not be: a list is not fetched again for the next
	// target.
	mu     sync.Mutex
	seen   map[string]*entry
	failed map[string]error
}

// New returns a Lister with o's settings.
func New(o Options) *Lister {
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.HTTP == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = time.Minute
		o.HTTP = &http.Client{Transport: t}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	if o.AzureURL == "" {
		o.AzureURL = "https://prices.azure.com/api/retail/prices"
	}
	if o.AWSURL == "" {
		o.AWSURL = "https://pricing.us-east-1.amazonaws.com"
	}
	if o.GCPURL == "" {
		o.GCPURL = "https://cloudbilling.googleapis.com"
	}
	return &Lister{o: o, seen: map[string]*entry{}, failed: map[string]error{}}
}

// Price looks q up. The price has its components, Currency, Source (the list,
// the region and the meters or products used), Date (the list's effective
// date) and Fetched (when the list was read). Errors name what is wrong in q,
// what failed to be fetched, or the field of a list whose shape changed.
func (l *Lister) Price(ctx context.Context, q Query) (cost.Price, error) {
	if q.Region == "" {
		return cost.Price{}, fmt.Errorf("%s: no region; give one such as %s", q.Cloud, map[string]string{"azure": "eastus", "aws": "us-east-1", "gcp": "us-central1"}[q.Cloud])
	}
	var st Storage
	if q.Storage != "" {
		var err error
		if st, err = ParseStorage(q.Storage); err != nil {
			return cost.Price{}, err
		}
	}
	var p cost.Price
	var err error
	switch q.Cloud {
	case "azure":
		p, err = l.azure(ctx, q, st)
	case "aws":
		p, err = l.aws(ctx, q, st)
	case "gcp":
		p, err = l.gcp(ctx, q, st)
	default:
		return cost.Price{}, fmt.Errorf("unknown cloud %q; want one of %s", q.Cloud, strings.Join(Clouds, ", "))
	}
	if err != nil {
		return cost.Price{}, err
	}
	// A server is never free: a zero is a list that changed, not a price.
	if p.ComputePerHour <= 0 {
		return cost.Price{}, fmt.Errorf("%s: the list prices the compute at %v; no price is made of it (%s)", q, p.ComputePerHour, p.Source)
	}
	if err := p.Validate(); err != nil {
		return cost.Price{}, fmt.Errorf("%s: the price looked up is not usable: %w", q, err)
	}
	return p, nil
}

// ShapeError is a price list whose answer lacks what it had when this code
// was written: a field missing or of another type, or a unit not known. It
// is never taken for a zero price.
type ShapeError struct {
	List  string // "Azure Retail Prices API"
	Field string // "Items[3].retailPrice"
	Msg   string
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("%s: %s %s; the price list's shape may have changed, so no price is made from it", e.List, e.Field, e.Msg)
}

// NotFoundError is a query the list has no price for, with the nearest
// things it has.
type NotFoundError struct {
	What    string   // "SKU Standard_D16ds_v6"
	Where   string   // "Azure Database for PostgreSQL flexible server in eastus"
	Nearest []string // nearest first
	Hint    string   // what to do instead, when Nearest is not the answer
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("no %s for %s", e.What, e.Where)
	if len(e.Nearest) > 0 {
		msg += "; nearest: " + strings.Join(e.Nearest, ", ")
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// entry is a cached list, or the part of one that prices need.
type entry struct {
	Source  string          `json:"source"`  // what was fetched
	Version string          `json:"version"` // the list's version or effective date
	Fetched time.Time       `json:"fetched"`
	Data    json.RawMessage `json:"data"`
}

// cacheDir is where lists are cached.
func (l *Lister) cacheDir() (string, error) {
	if l.o.CacheDir != "" {
		return l.o.CacheDir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for price lists (%v); set XDG_CACHE_HOME or give --price-cache", err)
	}
	return filepath.Join(dir, "pgbakeoff", "prices"), nil
}

// cachePath is the file of the cached list key names: readable names with a
// hash of the key, so that any key gives a safe file name.
func (l *Lister) cachePath(key string) (string, error) {
	dir, err := l.cacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(key))
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(key))
	if len(name) > 80 {
		name = name[:80]
	}
	return filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:6])+".json"), nil
}

func (l *Lister) readCache(key string) (*entry, error) {
	path, err := l.cachePath(key)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var e entry
	if err := json.Unmarshal(data, &e); err != nil || e.Fetched.IsZero() || len(e.Data) == 0 {
		return nil, fmt.Errorf("cached price list %s is damaged; delete it and look the price up again", path)
	}
	return &e, nil
}

func (l *Lister) writeCache(key string, e *entry) error {
	path, err := l.cachePath(key)
	if err != nil {
		return err
	}
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cache price list: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("cache price list: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("cache price list: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cache price list: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cache price list: %w", err)
	}
	return nil
}

// list returns the list key names, its data decoded into into: from the
// cache while it is fresh, else fetched and cached; what is called what in
// messages. A list that cannot be fetched falls back to the cache with a
// warning; Offline reads the cache alone, warning when it is stale. A
// ShapeError is never covered up. A list read, or failed, is not read again
// by this Lister.
func (l *Lister) list(ctx context.Context, key, what string, fetch func(context.Context) (*entry, error), into any) (*entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.seen[key]
	if e == nil {
		if err := l.failed[key]; err != nil {
			return nil, err
		}
		var err error
		if e, err = l.read(ctx, key, what, fetch); err != nil {
			if ctx.Err() == nil {
				l.failed[key] = err // not tried again for the next target
			}
			return nil, err
		}
		l.seen[key] = e
	}
	if err := json.Unmarshal(e.Data, into); err != nil {
		return nil, fmt.Errorf("cached %s is damaged (%v); delete it and look the price up again", what, err)
	}
	return e, nil
}

// fetched is when the list was read, as cost.Price.Fetched has it.
func (e *entry) fetched() string { return e.Fetched.UTC().Format(time.RFC3339) }

// read is list without the lists already read.
func (l *Lister) read(ctx context.Context, key, what string, fetch func(context.Context) (*entry, error)) (*entry, error) {
	cached, cacheErr := l.readCache(key)
	age := func(e *entry) string {
		return fmt.Sprintf("fetched %s, %s ago", e.Fetched.UTC().Format("2006-01-02 15:04 UTC"), roughly(l.o.Now().Sub(e.Fetched)))
	}
	if l.o.Offline {
		if cached == nil {
			if cacheErr != nil && !errors.Is(cacheErr, os.ErrNotExist) {
				return nil, cacheErr
			}
			return nil, fmt.Errorf("--offline, and %s is not cached; look it up once without --offline", what)
		}
		if l.o.Now().Sub(cached.Fetched) > l.o.MaxAge {
			l.o.Warn(fmt.Sprintf("using the cached %s (%s), older than %s: prices may have changed since; look it up without --offline to refresh it", what, age(cached), roughly(l.o.MaxAge)))
		}
		return cached, nil
	}
	if cached != nil && l.o.Now().Sub(cached.Fetched) <= l.o.MaxAge {
		return cached, nil
	}
	fresh, err := fetch(ctx)
	if err == nil {
		fresh.Fetched = l.o.Now().UTC()
		if err := l.writeCache(key, fresh); err != nil {
			l.o.Warn(err.Error() + "; the price is used without being cached")
		}
		return fresh, nil
	}
	var shape *ShapeError
	var missing *NotFoundError
	switch {
	case errors.As(err, &shape) || errors.As(err, &missing) || ctx.Err() != nil:
		return nil, err
	case cached == nil:
		return nil, fmt.Errorf("%w; there is no usable cached copy of %s to fall back to", err, what)
	}
	l.o.Warn(fmt.Sprintf("%v; using the cached %s (%s)", err, what, age(cached)))
	return cached, nil
}

// roughly is a duration for people: "3 days", "5 hours", "12 minutes".
func roughly(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d.Hours()/24))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d.Hours()))
	default:
		return fmt.Sprintf("%d minutes", int(d.Minutes()))
	}
}

// stallTimeout is how long a body may send nothing before its fetch fails;
// a variable for tests.
var stallTimeout = time.Minute

// get fetches u and returns its body for the caller to close. A status other
// than 200 is an error naming the address (a key in it redacted) and the
// status; a body that sends nothing for stallTimeout fails its reads.
func (l *Lister) get(ctx context.Context, u string) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("fetch %s: %w", redact(u), err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := l.o.HTTP.Do(req)
	if err != nil {
		cancel()
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the address, key and all
		}
		return nil, fmt.Errorf("fetch %s: %w", redact(u), err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		resp.Body.Close()
		cancel()
		msg := scrubKey(strings.Join(strings.Fields(string(body)), " "), u)
		if msg != "" {
			msg = ": " + msg
		}
		return nil, fmt.Errorf("fetch %s: %s%s", redact(u), resp.Status, msg)
	}
	b := &watchedBody{body: resp.Body, url: redact(u), cancel: cancel}
	b.timer = time.AfterFunc(stallTimeout, func() { b.stalled.Store(true); cancel() })
	return b, nil
}

// watchedBody is a response body whose fetch is cancelled when it stalls,
// and whose read errors name the address: they are failures to fetch, not a
// list that changed.
type watchedBody struct {
	body    io.ReadCloser
	url     string
	cancel  context.CancelFunc
	timer   *time.Timer
	stalled atomic.Bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.timer.Reset(stallTimeout)
	switch {
	case err == nil || err == io.EOF:
		return n, err
	case b.stalled.Load():
		return n, &fetchError{fmt.Errorf("fetch %s: nothing came for %s", b.url, stallTimeout)}
	}
	return n, &fetchError{fmt.Errorf("fetch %s: %w", b.url, err)}
}

func (b *watchedBody) Close() error {
	b.timer.Stop()
	err := b.body.Close()
	b.cancel()
	return err
}

// fetchError is a failure to read a list's answer, which JSON decoding passes
// on as it came.
type fetchError struct{ error }

func (e *fetchError) Unwrap() error { return e.error }

// redact is an address for messages: without a key= parameter's value.
// scrubKey removes from s, a server's answer that may repeat the request, the
// key in address u, as it was sent and as it reads unescaped.
func scrubKey(s, u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(the answer is withheld: the address does not parse)"
	}
	for _, k := range p.Query()["key"] {
		if k != "" {
			s = strings.ReplaceAll(strings.ReplaceAll(s, url.QueryEscape(k), "REDACTED"), k, "REDACTED")
		}
	}
	return s
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(an address that does not parse)"
	}
	q := p.Query()
	if q.Has("key") {
		q.Set("key", "REDACTED")
		p.RawQuery = q.Encode()
	}
	return p.String()
}

// roundMicro rounds an amount worked out to a millionth, so that a difference
// of prices prints as the prices do: 1074.36, not 1074.3600000000001.
func roundMicro(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// hostOf is the host of an address, for sources.
func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

// getJSON fetches u and decodes it into v; a body that is not the JSON v
// wants is a ShapeError of list.
func (l *Lister) getJSON(ctx context.Context, list, u string, v any) error {
	body, err := l.get(ctx, u)
	if err != nil {
		return err
	}
	defer body.Close()
	if err := json.NewDecoder(body).Decode(v); err != nil {
		return shapeOf(list, redact(u), err)
	}
	return nil
}

// shapeOf turns a JSON decoding error into a ShapeError naming the field;
// a failure to read, or an answer cut short, stays a failure to fetch.
func shapeOf(list, where string, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	var fe *fetchError
	switch {
	case errors.As(err, &fe):
		return fe.error
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("fetch %s: the answer ended early: %w", where, err)
	case errors.As(err, &te):
		return &ShapeError{List: list, Field: te.Field, Msg: fmt.Sprintf("is a JSON %s, not the %s it was", te.Value, te.Type)}
	case errors.As(err, &se):
		return &ShapeError{List: list, Field: "the answer from " + where, Msg: "is not JSON (" + err.Error() + ")"}
	}
	return fmt.Errorf("read %s: %w", where, err)
}

// newest is the latest of dates given as RFC 3339 times or dates, as a date.
func newest(dates []string) string {
	var best string
	for _, d := range dates {
		if len(d) >= 10 {
			d = d[:10]
		}
		if _, err := time.Parse(time.DateOnly, d); err == nil && d > best {
			best = d
		}
	}
	return best
}

// sortedKeys lists m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
