package metrics

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the figures are served.
const Path = "/metrics"

// Server serves the figures of the runs, loads and studies of one process, from
// Listen until Close; what ended stays as it ended.
type Server struct {
	ln  net.Listener
	srv *http.Server

	mu      sync.Mutex
	runs    []*Run
	loads   []*Load
	studies []*Study
}

// Listen binds addr (host:port, or :port for every address) at once, so that a
// bad address or a port in use fails before anything runs, and serves Path on it.
func Listen(addr string) (*Server, error) {
	if addr == "" {
		return nil, errors.New("no address: give host:port or :port, as :9187")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
		}
		return nil, fmt.Errorf("cannot listen on %s (%v): give a free host:port or :port, as :9187", addr, err)
	}
	s := &Server{ln: ln}
	reg := prometheus.NewRegistry()
	reg.MustRegister(s, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on, with the port chosen for :0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops serving.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	return s.srv.Close()
}

// Describe sends every figure's description (prometheus.Collector).
func (s *Server) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs() {
		ch <- d
	}
}

// Collect sends the current value of every figure (prometheus.Collector).
func (s *Server) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	runs, loads, studies := slices.Clone(s.runs), slices.Clone(s.loads), slices.Clone(s.studies)
	s.mu.Unlock()
	for _, r := range runs {
		r.collect(ch)
	}
	for _, l := range loads {
		l.collect(ch)
	}
	for _, st := range studies {
		st.collect(ch)
	}
}

// add keeps r, replacing an earlier run of the same labels (a study's next
// repetition): its counters start again from zero, which Prometheus reads as a
// reset.
func (s *Server) add(r *Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = slices.DeleteFunc(s.runs, func(o *Run) bool { return slices.Equal(o.labels, r.labels) })
	s.runs = append(s.runs, r)
}
