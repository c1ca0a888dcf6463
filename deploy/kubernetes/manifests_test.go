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
	var pvc corev1.PersistentVolumeClaim
	decode(t, "results-pvc.yaml", &pvc)
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || secret.Kind != "Secret" || pvc.Kind != "PersistentVolumeClaim" {
		t.Fatalf("kinds: %s %s, %s, %s", job.APIVersion, job.Kind, secret.Kind, pvc.Kind)
	}

	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed: the pods' indexes are the shards", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 2 {
		t.Fatalf("completions %v, parallelism %v: want them equal, every shard running at once", s.Completions, s.Parallelism)
	}
	if s.BackoffLimit == nil || *s.BackoffLimit != 0 || s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("backoffLimit %v, restartPolicy %s: a shard must not be started again midway", s.BackoffLimit, s.Template.Spec.RestartPolicy)
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
	// The shard count is the Job's completions.
	if v := env["PGBAKEOFF_SHARDS"].Value; v != strconv.Itoa(int(*s.Completions)) {
		t.Errorf("PGBAKEOFF_SHARDS %q, want the completions, %d", v, *s.Completions)
	}
	if env["PGBAKEOFF_START_AT"].Value == "" {
		t.Errorf("no PGBAKEOFF_START_AT: the shards need their common start")
	}
	// The password comes from the Secret, by a key it has, and is in no argument.
	ref := env["PGPASSWORD"].ValueFrom
	if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != secret.Name || secret.StringData[ref.SecretKeyRef.Key] == "" {
		t.Errorf("PGPASSWORD must come from the Secret %s: %+v", secret.Name, ref)
	}
	for _, a := range c.Args {
		if strings.Contains(strings.ToLower(a), "password") || strings.Contains(a, secret.StringData["PGPASSWORD"]) {
			t.Errorf("argument %q holds a password", a)
		}
	}
	// Each pod writes its own store, named by its index.
	idx := env["SHARD_INDEX"].ValueFrom
	if idx == nil || idx.FieldRef == nil || idx.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("SHARD_INDEX must be the pod's completion index: %+v", idx)
	}
	var results string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--results="); ok {
			results = v
		}
	}
	if !strings.Contains(results, "$(SHARD_INDEX)") {
		t.Errorf("--results %q: each shard needs a store of its own", results)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || strings.HasPrefix(results, m.MountPath+"/")
	}
	claimed := false
	for _, v := range pod.Volumes {
		claimed = claimed || v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name
	}
	if !mounted || !claimed || pvc.Spec.AccessModes[0] != corev1.ReadWriteMany {
		t.Errorf("the results must go to the claim %s (ReadWriteMany), mounted: %v, claimed: %v", pvc.Name, mounted, claimed)
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
