package sampler

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// nodeTimeout bounds one scrape of a node_exporter.
const nodeTimeout = 5 * time.Second

// nodeFamilies maps the node_exporter families the sampler reads to the
// values they give.
var nodeFamilies = map[string]string{
	"node_cpu_seconds_total":           "node_cpu",
	"node_disk_reads_completed_total":  "node_disk_read_iops",
	"node_disk_writes_completed_total": "node_disk_write_iops",
	"node_disk_read_bytes_total":       "node_disk_read_bytes",
	"node_disk_written_bytes_total":    "node_disk_write_bytes",
}

// stackedDevices are prefixes of device names whose I/O is either another
// device's (device mapper, software RAID) or no disk's (loop, RAM disks).
var stackedDevices = []string{"loop", "ram", "zram", "dm-", "md"}

// nodeReading is the host's counters at one instant, under the value names
// they give ("node_cpu" holds busy CPU seconds); a family the exporter does
// not have is absent.
type nodeReading struct {
	at     time.Time
	totals map[string]float64
}

// readNode scrapes a node_exporter. A reading that lacks a family is still
// returned, with an error saying so.
func readNode(ctx context.Context, client *http.Client, url string) (*nodeReading, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// The text format; without this, newer exporters may answer in OpenMetrics.
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	before := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s", resp.Status)
	}
	totals, err := parseNode(resp.Body)
	if err != nil {
		return nil, err
	}
	r := &nodeReading{at: before.Add(time.Since(before) / 2), totals: totals}
	if _, ok := totals["node_cpu"]; !ok {
		return r, fmt.Errorf("no node_cpu_seconds_total (is the cpu collector off?)")
	}
	if _, ok := totals["node_disk_read_iops"]; !ok {
		return r, fmt.Errorf("no node_disk_* counters (is the diskstats collector off?)")
	}
	return r, nil
}

// parseNode sums the families the sampler uses from the Prometheus text
// exposition format. Two families and one label each are few enough to
// parse here: the expfmt package would bring prometheus/common,
// client_model, protobuf and an ABNF parser into the module.
func parseNode(r io.Reader) (map[string]float64, error) {
	totals := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		end := strings.IndexAny(line, "{ \t")
		if end < 0 {
			end = len(line)
		}
		name := line[:end]
		value, ok := nodeFamilies[name]
		if !ok {
			continue
		}
		labels, v, err := parseSeries(line[end:])
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", n, name, err)
		}
		if !counted(value, labels) || math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0 // left out, though the family is there
		}
		totals[value] += v
	}
	return totals, sc.Err()
}

// counted tells whether a series counts: CPU time in a busy mode, or the
// I/O of a disk that is not stacked on others.
func counted(value string, labels map[string]string) bool {
	if value == "node_cpu" {
		return labels["mode"] != "idle" && labels["mode"] != "iowait"
	}
	for _, p := range stackedDevices {
		if strings.HasPrefix(labels["device"], p) {
			return false
		}
	}
	return true
}

// parseSeries parses what follows the metric name on a line of the text
// format: labels in braces if any, the value, and perhaps a timestamp.
// Label values are quoted, with \\, \" and \n escaped.
func parseSeries(s string) (labels map[string]string, value float64, err error) {
	labels = map[string]string{}
	if s = strings.TrimLeft(s, " \t"); strings.HasPrefix(s, "{") {
		s = s[1:]
		for {
			s = strings.TrimLeft(s, " \t")
			if strings.HasPrefix(s, "}") {
				s = s[1:]
				break
			}
			eq := strings.IndexByte(s, '=')
			if eq < 0 {
				return nil, 0, fmt.Errorf("label without a value")
			}
			name := strings.TrimSpace(s[:eq])
			s = strings.TrimLeft(s[eq+1:], " \t")
			if !strings.HasPrefix(s, `"`) {
				return nil, 0, fmt.Errorf("label %s: value not quoted", name)
			}
			var b strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					if s[i] == 'n' {
						b.WriteByte('\n')
						continue
					}
				}
				b.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, 0, fmt.Errorf("label %s: value not terminated", name)
			}
			labels[name] = b.String()
			s = strings.TrimLeft(s[i+1:], " \t")
			s = strings.TrimPrefix(s, ",")
		}
	}
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 {
		return nil, 0, fmt.Errorf("want a value and perhaps a timestamp, got %q", s)
	}
	if value, err = strconv.ParseFloat(f[0], 64); err != nil {
		return nil, 0, fmt.Errorf("value: %w", err)
	}
	return labels, value, nil
}

// nodeValues adds the host's rates between two readings.
func nodeValues(prev, cur *nodeReading, values map[string]float64) {
	secs := cur.at.Sub(prev.at).Seconds()
	if secs <= 0 {
		return
	}
	for name, c := range cur.totals {
		if p, ok := prev.totals[name]; ok && c >= p {
			values[name] = (c - p) / secs
		}
	}
}
