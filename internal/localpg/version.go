package localpg

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// version is a parsed PostgreSQL version: 16.10 is {16, 10}. Releases
// before 10 used two numbers for the major version; they are not supported.
// A pre-release such as 18beta1 has minor -1 so that it sorts below 18.0.
type version struct {
	major, minor int
	text         string
}

func (v version) less(w version) bool {
	if v.major != w.major {
		return v.major < w.major
	}
	return v.minor < w.minor
}

// request is what the caller asked for: any version, a major version or an
// exact version.
type request struct {
	major, minor int // 0 = any; minor -1 = any minor of major
	text         string
}

var requestPattern = regexp.MustCompile(`^([0-9]{1,3})(?:\.([0-9]{1,4}))?$`)

func parseRequest(s string) (request, error) {
	if s == "" {
		return request{minor: -1}, nil
	}
	m := requestPattern.FindStringSubmatch(s)
	if m == nil {
		return request{}, fmt.Errorf("invalid PostgreSQL version %q: want a major version like \"16\" or an exact one like \"16.10\"", s)
	}
	r := request{minor: -1, text: s}
	r.major, _ = strconv.Atoi(m[1])
	if m[2] != "" {
		r.minor, _ = strconv.Atoi(m[2])
	}
	return r, nil
}

func (r request) matches(v version) bool {
	if r.major == 0 {
		return true
	}
	return v.major == r.major && (r.minor < 0 || v.minor == r.minor)
}

var serverVersionPattern = regexp.MustCompile(`\(PostgreSQL\) ([0-9]+)(?:\.([0-9]+))?([a-z]+[0-9]*)?`)

// parseServerVersion reads the output of `postgres --version`, for example
// "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)".
func parseServerVersion(out string) (version, error) {
	m := serverVersionPattern.FindStringSubmatch(out)
	if m == nil {
		return version{}, fmt.Errorf("unrecognised version output %q", strings.TrimSpace(out))
	}
	v := version{minor: -1, text: m[1]}
	v.major, _ = strconv.Atoi(m[1])
	switch {
	case m[2] != "":
		v.minor, _ = strconv.Atoi(m[2])
		v.text += "." + m[2]
	case m[3] != "":
		v.text += m[3]
	}
	if v.major < 10 {
		return version{}, fmt.Errorf("PostgreSQL %s is too old: pgbakeoff needs 10 or newer", strings.TrimSpace(m[0][len("(PostgreSQL) "):]))
	}
	return v, nil
}
