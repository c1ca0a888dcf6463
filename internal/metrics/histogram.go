package metrics

import (
	"math"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// Classic buckets, in seconds: for scrapers that do not ask for native histograms.
var classicBounds = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// nativeSchema is the native histograms' resolution: 2^3 buckets to a doubling,
// each about 9% wider than the one before, coarser than the HDR histogram they are
// made from (three significant digits).
const nativeSchema = 3

// histogramValue is an HDR histogram turned into both kinds of Prometheus
// buckets: a scraper that asks for the protocol buffer format gets the native
// ones, one that reads text the classic ones.
type histogramValue struct {
	count   uint64
	sum     float64
	classic []uint64 // cumulative, by classicBounds
	zero    uint64
	spans   []*dto.BucketSpan
	deltas  []int64
}

func newHistogramValue(h *hdrhistogram.Histogram) histogramValue {
	v := histogramValue{classic: make([]uint64, len(classicBounds))}
	native := map[int]int64{}
	for _, b := range bars(h) {
		// A bar holds the values From..To; From stands for them all, as it is
		// the value recorded for whole microseconds below 2048.
		secs := (time.Duration(b.From) * unit).Seconds()
		v.count += uint64(b.Count)
		v.sum += float64(b.Count) * (time.Duration(b.From+b.To) * unit / 2).Seconds()
		if i, _ := slices.BinarySearch(classicBounds, secs); i < len(classicBounds) {
			v.classic[i] += uint64(b.Count)
		}
		if secs <= 0 {
			v.zero += uint64(b.Count)
			continue
		}
		native[nativeIndex(secs)] += b.Count
	}
	for i := 1; i < len(v.classic); i++ {
		v.classic[i] += v.classic[i-1]
	}
	v.spans, v.deltas = spans(native)
	return v
}

// bars are h's buckets that hold values, as Distribution gives them, but read from
// one copy of its counts: Distribution makes a bar of every bucket up to the
// largest value, some 800 kB at each scrape of a run, for a few dozen that count.
func bars(h *hdrhistogram.Histogram) []hdrhistogram.Bar {
	var out []hdrhistogram.Bar
	for i, n := range h.Export().Counts {
		if n != 0 {
			from, to := indexRange(i)
			out = append(out, hdrhistogram.Bar{From: from, To: to, Count: n})
		}
	}
	return out
}

// indexRange is the values counted at index i of an HDR histogram made by
// histogram.New (unit 1, three significant digits: 2^11 sub-buckets, the first
// bucket whole and every later one its upper half, each twice as wide).
func indexRange(i int) (from, to int64) {
	const halfMag = 10
	bucket := i>>halfMag - 1
	sub := i&(1<<halfMag-1) + 1<<halfMag
	if bucket < 0 {
		bucket, sub = 0, i
	}
	from = int64(sub) << bucket
	return from, from + 1<<bucket - 1
}

// nativeIndex is the native bucket holding x > 0: bucket i holds
// (2^((i-1)/2^schema), 2^(i/2^schema)].
func nativeIndex(x float64) int {
	frac, exp := math.Frexp(x) // x = frac * 2^exp, frac in [0.5, 1)
	const per = 1 << nativeSchema
	i := int(math.Ceil(math.Log2(frac)*per)) + exp*per
	return i
}

// spans encodes native buckets as Prometheus does: runs of consecutive indexes,
// each count a delta from the one before.
func spans(buckets map[int]int64) ([]*dto.BucketSpan, []int64) {
	keys := make([]int, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var ss []*dto.BucketSpan
	var deltas []int64
	var prevCount int64
	next := 0 // the index after the last span's end
	for i, k := range keys {
		if i == 0 || k != next {
			offset := k - next
			if i == 0 {
				offset = k
			}
			ss = append(ss, &dto.BucketSpan{Offset: proto.Int32(int32(offset)), Length: proto.Uint32(0)})
		}
		s := ss[len(ss)-1]
		*s.Length++
		deltas = append(deltas, buckets[k]-prevCount)
		prevCount = buckets[k]
		next = k + 1
	}
	return ss, deltas
}

// histogramMetric is one series' histogram, classic and native buckets both.
type histogramMetric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	v      histogramValue
}

func (m *histogramMetric) Desc() *prometheus.Desc { return m.desc }

func (m *histogramMetric) Write(out *dto.Metric) error {
	h := &dto.Histogram{
		SampleCount: proto.Uint64(m.v.count), SampleSum: proto.Float64(m.v.sum),
		Schema: proto.Int32(nativeSchema), ZeroThreshold: proto.Float64(prometheus.DefNativeHistogramZeroThreshold),
		ZeroCount: proto.Uint64(m.v.zero), PositiveSpan: m.v.spans, PositiveDelta: m.v.deltas,
	}
	for i, b := range classicBounds {
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(b), CumulativeCount: proto.Uint64(m.v.classic[i])})
	}
	if len(h.PositiveSpan) == 0 && m.v.zero == 0 {
		// An empty native histogram still needs a span to be read as native.
		h.PositiveSpan = []*dto.BucketSpan{{Offset: proto.Int32(0), Length: proto.Uint32(0)}}
	}
	out.Label, out.Histogram = m.labels, h
	return nil
}
