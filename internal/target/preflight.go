package target

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Info is what a target says about itself before a run.
type Info struct {
	Address        string            // what the connection reached: host:port (resolved) or socket
	Version        string            // server_version, e.g. "16.4"
	VersionNum     int               // server_version_num, e.g. 160004
	Settings       map[string]string // settings not at their built-in default
	MaxConnections int
	Reserved       int // superuser_reserved_connections (+ reserved_connections from 16)
	InUse          int // backends holding a connection slot now
	SSL            bool
	TLSVersion     string // e.g. "TLSv1.3"; "" without TLS
	TLSCipher      string
	SharedBuffers  int64 // bytes
}

// MonitorConns is how many connections pgbakeoff opens besides the clients': one to
// control the run and two for the sampler.
const MonitorConns = 3

// FreeSlots is how many more ordinary connections the server accepts now.
func (i *Info) FreeSlots() int { return i.MaxConnections - i.Reserved - i.InUse }

// Inspect connects and reads the server's version, its non-default settings and its
// connection slots.
func (t *Target) Inspect(ctx context.Context) (*Info, error) {
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	info := &Info{Address: t.Address(), Settings: map[string]string{}}
	if addrs, err := t.Resolve(ctx); err == nil && len(addrs) > 0 && !strings.HasPrefix(t.Config.Host, "/") {
		info.Address = fmt.Sprintf("%s (%s)", t.Address(), strings.Join(addrs, ", "))
	}
	rows, err := query(ctx, conn, `select current_setting('server_version'), current_setting('server_version_num'),
		current_setting('max_connections'), current_setting('superuser_reserved_connections'),
		coalesce(current_setting('reserved_connections', true), '0'),
		(select count(*) from pg_stat_activity where backend_type = 'client backend'),
		coalesce((select ssl::text from pg_stat_ssl where pid = pg_backend_pid()), 'false'),
		pg_size_bytes(current_setting('shared_buffers')),
		coalesce((select version || ' ' || cipher from pg_stat_ssl where pid = pg_backend_pid() and ssl), '')`)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", t, err)
	}
	r := rows[0]
	info.Version = r[0]
	info.VersionNum, _ = strconv.Atoi(r[1])
	info.MaxConnections, _ = strconv.Atoi(r[2])
	su, _ := strconv.Atoi(r[3])
	res, _ := strconv.Atoi(r[4])
	info.Reserved = su + res
	info.InUse, _ = strconv.Atoi(r[5])
	info.SSL = r[6] == "true"
	info.SharedBuffers, _ = strconv.ParseInt(r[7], 10, 64)
	info.TLSVersion, info.TLSCipher, _ = strings.Cut(r[8], " ")
	rows, err = query(ctx, conn, `select name, current_setting(name) from pg_settings
		where source not in ('default', 'override', 'client', 'session') and name not in ('application_name')
		order by name`)
	if err != nil {
		return nil, fmt.Errorf("inspect %s settings: %w", t, err)
	}
	for _, r := range rows {
		// primary_conninfo and its kind may hold a replication password.
		if strings.HasSuffix(r[0], "conninfo") {
			r[1] = Redact(r[1])
		}
		info.Settings[r[0]] = r[1]
	}
	return info, nil
}

// CheckSlots fails when clients connections, plus own for pgbakeoff's own
// sessions (MonitorConns, and a fault run's ledger), do not fit in the
// server's free connection slots.
func (i *Info) CheckSlots(clients, own int) error {
	if free := i.FreeSlots(); clients+own > free {
		return fmt.Errorf("%d clients need %d connection slots (%d more for pgbakeoff's own sessions) but the server has %d free: max_connections %d - reserved %d - in use %d; lower --clients or raise max_connections",
			clients, clients+own, own, free, i.MaxConnections, i.Reserved, i.InUse)
	}
	return nil
}

// query runs sql and returns its rows as text.
func query(ctx context.Context, conn *pgconn.PgConn, sql string) ([][]string, error) {
	results, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, res := range results {
		for _, row := range res.Rows {
			r := make([]string, len(row))
			for i, v := range row {
				r[i] = string(v)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// Query runs sql on conn and returns the rows as text; for small catalog queries.
func Query(ctx context.Context, conn *pgconn.PgConn, sql string) ([][]string, error) {
	return query(ctx, conn, sql)
}

// IncidentalSettings are settings that differ between any two servers and say nothing
// about performance.
var IncidentalSettings = map[string]bool{
	"application_name": true, "config_file": true, "data_directory": true, "hba_file": true, "ident_file": true,
	"port": true, "unix_socket_directories": true, "listen_addresses": true, "external_pid_file": true,
	"log_directory": true, "log_filename": true, "logging_collector": true, "log_destination": true,
	"lc_messages": true, "lc_monetary": true, "lc_numeric": true, "lc_time": true, "DateStyle": true,
	"TimeZone": true, "log_timezone": true, "default_text_search_config": true, "client_encoding": true,
	"dynamic_shared_memory_type": true, "unix_socket_permissions": true, "unix_socket_group": true,
}
