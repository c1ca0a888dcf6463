// Package kubernetes_test checks the manifests in this directory with the
// Kubernetes API's own types, and their arguments with pgbakeoff's command line.
package kubernetes_test

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decode reads a manifest strictly: a field the API type lacks is an error.
func decode(t *testing.T, file string, into any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func TestIndexedJob(t *testing.T) {
	var job batchv1.Job
	decode(t, "tpcc-indexed-job.yaml", &job)
	var secret corev1.Secret
	decode(t, "secret.yaml", &secret)
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || secret.APIVersion != "v1" || secret.Kind != "Secret" {
		t.Fatalf("kinds: %s %s, %s %s", job.APIVersion, job.Kind, secret.APIVersion, secret.Kind)
	}

	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed: the pods' indexes are the shards", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 2 {
		t.Fatalf("completions %v, parallelism %v: want them equal, every shard running at once", s.Completions, s.Parallelism)
	}
	// A failed shard is not started again midway, and does not stop the others.
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0 || s.MaxFailedIndexes == nil || *s.MaxFailedIndexes != *s.Completions ||
		s.BackoffLimit != nil || s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("backoffLimitPerIndex %v, maxFailedIndexes %v, backoffLimit %v, restartPolicy %s: want 0, the completions, none and Never",
			s.BackoffLimitPerIndex, s.MaxFailedIndexes, s.BackoffLimit, s.Template.Spec.RestartPolicy)
	}
	pod := s.Template.Spec
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("the pods must run as a user other than root: %+v", sc)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	// The shard count is the Job's completions; the run's name is the Job's uid.
	if v := env["PGBAKEOFF_SHARDS"].Value; v != strconv.Itoa(int(*s.Completions)) {
		t.Errorf("PGBAKEOFF_SHARDS %q, want the completions, %d", v, *s.Completions)
	}
	if g := env["PGBAKEOFF_SHARD_GROUP"].ValueFrom; g == nil || g.FieldRef == nil || g.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/controller-uid']" {
		t.Errorf("PGBAKEOFF_SHARD_GROUP must be the Job's uid, new each time it is applied: %+v", g)
	}
	// The passwords come from the Secret, by keys it has, and are in no argument.
	for _, name := range []string{"PGPASSWORD", "PGBAKEOFF_RESULTS"} {
		ref := env[name].ValueFrom
		if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != secret.Name || secret.StringData[ref.SecretKeyRef.Key] == "" {
			t.Errorf("%s must come from the Secret %s: %+v", name, secret.Name, ref)
		}
	}
	for _, a := range c.Args {
		if strings.Contains(strings.ToLower(a), "password") || strings.Contains(a, secret.StringData["PGPASSWORD"]) || strings.HasPrefix(a, "--results") {
			t.Errorf("argument %q holds a password or names the results store, which the Secret does", a)
		}
	}
	// The arguments are pgbakeoff's: its command line takes them (--help stops
	// before anything connects).
	env2 := cli.NewEnv()
	var out, errOut bytes.Buffer
	env2.Stdout, env2.Stderr = &out, &errOut
	env2.Args = append(append([]string{}, c.Args...), "--help")
	if code := cli.Main(env2); code != 0 || !strings.Contains(out.String(), "--shard") {
		t.Errorf("pgbakeoff %s: exit %d\n%s%s", strings.Join(c.Args, " "), code, out.String(), errOut.String())
	}
}

// The image is built static and runs as an unprivileged user.
func TestContainerImage(t *testing.T) {
	b, err := os.ReadFile("../container/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	d := string(b)
	for _, want := range []string{"CGO_ENABLED=0", "./cmd/pgbakeoff", "USER 65532", ":nonroot"} {
		if !strings.Contains(d, want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
}
