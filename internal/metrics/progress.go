package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Counter is how far some work has come (load.Progress): units done, and in all
// (0 until known).
type Counter interface {
	Counts() (done, total int64)
}

// Load is a load's progress, read at each scrape.
type Load struct {
	labels []string
	c      Counter
}

// Load shows a load of workload's data into target, counted in unit. A nil
// Server does nothing.
func (s *Server) Load(target, workload, unit string, c Counter) {
	if s == nil {
		return
	}
	l := &Load{labels: []string{target, workload, unit}, c: c}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, o := range s.loads {
		if o.labels[0] == target && o.labels[1] == workload && o.labels[2] == unit {
			s.loads[i] = l // a load made again
			return
		}
	}
	s.loads = append(s.loads, l)
}

func (l *Load) collect(ch chan<- prometheus.Metric) {
	done, total := l.c.Counts()
	ch <- prometheus.MustNewConstMetric(descLoadDone, prometheus.GaugeValue, float64(done), l.labels...)
	ch <- prometheus.MustNewConstMetric(descLoadTotal, prometheus.GaugeValue, float64(total), l.labels...)
}

// Study is a study's progress through its plan.
type Study struct {
	name                  string
	mu                    sync.Mutex
	planned, made, failed int
}

// Study shows the progress of the named study. A nil Server gives a nil Study,
// whose methods do nothing.
func (s *Server) Study(name string) *Study {
	if s == nil {
		return nil
	}
	st := &Study{name: name}
	s.mu.Lock()
	s.studies = append(s.studies, st)
	s.mu.Unlock()
	return st
}

// Plan sets the runs of the plan and how many of them were made before.
func (st *Study) Plan(planned, made int) {
	if st == nil {
		return
	}
	st.mu.Lock()
	st.planned, st.made = planned, made
	st.mu.Unlock()
}

// Ran counts a run this process made: made, or failed.
func (st *Study) Ran(ok bool) {
	if st == nil {
		return
	}
	st.mu.Lock()
	if ok {
		st.made++
	} else {
		st.failed++
	}
	st.mu.Unlock()
}

func (st *Study) collect(ch chan<- prometheus.Metric) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(descStudyPlanned, prometheus.GaugeValue, float64(st.planned), st.name)
	ch <- prometheus.MustNewConstMetric(descStudyMade, prometheus.GaugeValue, float64(st.made), st.name)
	ch <- prometheus.MustNewConstMetric(descStudyFailed, prometheus.GaugeValue, float64(st.failed), st.name)
}
