package studyrun

import (
	"context"
	"fmt"
	"strings"
)

// stopStudyServers stops the local servers a study started. Once every run is
// made (finished) their data directories are removed too; a study that stopped
// early keeps them, so that `study run` again continues without loading its data
// again, and says how to remove them instead.
func stopStudyServers(sr *Runner, targets []*studyTarget, serversDir string, finished bool) {
	var kept []string
	for _, t := range targets {
		if t.cluster == nil {
			continue
		}
		if err := t.cluster.Stop(context.Background()); err != nil {
			fmt.Fprintf(sr.Log, "target %s: %v\n", t.t.Name, err)
			continue
		}
		if !finished {
			for _, node := range t.cluster.Nodes {
				kept = append(kept, node.Name)
			}
			continue
		}
		if err := t.cluster.Remove(); err != nil {
			fmt.Fprintf(sr.Log, "target %s: %v\n", t.t.Name, err)
		}
	}
	if len(kept) == 0 {
		return
	}
	prune := "pgbakeoff server prune"
	if serversDir != "" {
		prune += " --servers-dir " + serversDir
	}
	fmt.Fprintf(sr.Log, "the data of local servers %s stays for `study run` to continue; `%s` removes it\n", strings.Join(kept, ", "), prune)
}
