package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version says which build this is: the module's version as Go stamps it (a tag,
// or a pseudo-version naming the commit), else the commit it was built from
// (with "+changes" when the checkout had uncommitted changes), and the Go that
// built it.
func version() string {
	v, rev, dirty := "(devel)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && v == "(devel)" {
		v += ", commit " + rev
		if dirty {
			v += "+changes"
		}
	}
	return fmt.Sprintf("%s (%s, %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
