package pricelist

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Storage is a deployment's storage: its type (as the cloud names it: gp3,
// io1, premium-ssd-v2, ...; "" for the cloud's default), its size, and the
// IOPS and throughput provisioned for it (0: the type's baseline).
type Storage struct {
	Type string
	GiB  float64
	IOPS float64
	MBps float64
}

// ParseStorage reads a storage spec: parts separated by ':' in any order, a
// size (1000GiB, 1TiB; GB and TB are read as the clouds' price lists read
// them, as GiB and TiB), IOPS (12000iops), throughput (500mbps or
// 500mibps) and a type (gp3), such as "gp3:1000GiB:12000iops" or "1TiB".
func ParseStorage(spec string) (Storage, error) {
	var s Storage
	if strings.TrimSpace(spec) == "" {
		return s, fmt.Errorf("storage is empty; give a size such as 1TiB, or type, size and IOPS such as gp3:1000GiB:12000iops")
	}
	for part := range strings.SplitSeq(spec, ":") {
		p := strings.ToLower(strings.TrimSpace(part))
		num, unit := splitNumber(p)
		var v float64
		if num != "" {
			var err error
			if v, err = strconv.ParseFloat(num, 64); err != nil || v <= 0 || math.IsInf(v, 0) {
				return s, fmt.Errorf("storage %q: %q is not a positive amount", spec, part)
			}
		}
		switch {
		case num == "" && p != "" && s.Type == "":
			s.Type = p
		case num == "":
			return s, fmt.Errorf("storage %q: %q is a second type or empty; give one type, a size, and optionally IOPS and throughput", spec, part)
		case unit == "gib" || unit == "gb":
			s.GiB = v
		case unit == "tib" || unit == "tb":
			s.GiB = v * 1024
		case unit == "iops":
			s.IOPS = v
		case unit == "mbps" || unit == "mibps" || unit == "mb/s" || unit == "mib/s":
			s.MBps = v
		default:
			return s, fmt.Errorf("storage %q: unknown unit in %q; sizes are in GiB or TiB, IOPS end in iops, throughput in mbps", spec, part)
		}
	}
	if s.GiB == 0 {
		return s, fmt.Errorf("storage %q has no size; add one such as 1000GiB or 1TiB", spec)
	}
	return s, nil
}

// splitNumber splits "1000gib" into "1000" and "gib"; "gp3" has no number.
func splitNumber(p string) (string, string) {
	i := 0
	for i < len(p) && (p[i] >= '0' && p[i] <= '9' || p[i] == '.') {
		i++
	}
	return p[:i], strings.TrimSpace(p[i:])
}

func number(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
