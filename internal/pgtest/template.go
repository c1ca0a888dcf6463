package pgtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// templates are the databases loaded once per test binary for Loaded, by key.
var templates struct {
	mu sync.Mutex
	m  map[string]*template
}

type template struct {
	once sync.Once
	name string
	err  error
}

// Loaded returns the DSN of a new database for the test on the shared server, a
// copy (CREATE DATABASE ... TEMPLATE) of the one that load filled the first time
// a test of the binary asked for key. Tests that need the same data in place, and
// may change their copy, so share one load; copying is quicker than loading.
// load gets the DSN of the database to fill and must close its sessions; an
// error from it fails every test that asks for key. The copy is dropped when the
// test ends, the loaded database after the tests.
func Loaded(t testing.TB, key string, load func(dsn string) error) string {
	t.Helper()
	dsn := DSN(t)
	templates.mu.Lock()
	if templates.m == nil {
		templates.m = map[string]*template{}
	}
	tp := templates.m[key]
	if tp == nil {
		tp = &template{}
		templates.m[key] = tp
	}
	templates.mu.Unlock()
	tp.once.Do(func() {
		// Stays if load ends its test (t.Fatal) before fill returns.
		tp.err = errors.New("the load stopped the test that ran it")
		tp.name, tp.err = fill(dsn, key, load)
	})
	if tp.err != nil {
		t.Fatalf("pgtest: load %s: %v", key, tp.err)
	}
	return createDatabase(t, tp.name)
}

// fill creates the database to copy for key and has load fill it; on failure it
// drops it again.
func fill(dsn, key string, load func(dsn string) error) (string, error) {
	name, err := dbName("tmpl_" + key)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := execSQL(ctx, dsn, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	done := false
	defer func() {
		if !done {
			_ = dropDatabase(context.Background(), dsn, name)
		}
	}()
	if err := load(withDatabase(dsn, name)); err != nil {
		return "", err
	}
	// A copy is made only while no session is in the loaded database: none may
	// connect to it from now on.
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := execSQL(ctx, dsn, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH ALLOW_CONNECTIONS false"); err != nil {
		return "", err
	}
	done = true
	return name, nil
}

// dropTemplates drops the databases loaded for Loaded, which a server named by
// DSNEnv would otherwise keep.
func dropTemplates() error {
	templates.mu.Lock()
	defer templates.mu.Unlock()
	var errs []error
	for key, tp := range templates.m {
		if tp.name == "" || tp.err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := dropDatabase(ctx, shared.dsn, tp.name); err != nil {
			errs = append(errs, fmt.Errorf("drop the database loaded for %s: %w", key, err))
		}
		cancel()
	}
	return errors.Join(errs...)
}
