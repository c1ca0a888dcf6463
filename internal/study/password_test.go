package study

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestPasswordResolve(t *testing.T) {
	t.Setenv("STUDY_TEST_PW", "s3cret env")
	t.Setenv("STUDY_TEST_EMPTY", "")
	tests := []struct {
		name    string
		pw      Password
		want    string
		wantErr string
	}{
		{"env", Password{Env: "STUDY_TEST_PW"}, "s3cret env", ""},
		{"env unset", Password{Env: "STUDY_TEST_UNSET_42"}, "", "password: environment variable STUDY_TEST_UNSET_42 is not set"},
		{"env empty", Password{Env: "STUDY_TEST_EMPTY"}, "", "password: environment variable STUDY_TEST_EMPTY is empty"},
		{"command", Password{Command: "echo s3cret-cmd"}, "s3cret-cmd", ""},
		{"command keeps inner newlines", Password{Command: "printf 'a\\nb\\n\\n'"}, "a\nb\n", ""},
		{"command without newline", Password{Command: "printf s3cret"}, "s3cret", ""},
		// The commands print s3cret-leak without holding it, so that the
		// error holding it could only come from their output.
		{"command fails", Password{Command: "printf 's3cr%s' et-leak; echo 'vault: permission denied' >&2; echo more >&2; exit 3"}, "",
			`password command "printf 's3cr%s' et-leak; echo 'vault: permission denied' >&2; echo more >&2; exit 3": exit status 3: vault: permission denied`},
		{"command fails silently", Password{Command: "printf 's3cr%s' et-leak; false"}, "", `password command "printf 's3cr%s' et-leak; false": exit status 1`},
		{"command prints nothing", Password{Command: "true"}, "", `password command "true" printed nothing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.pw.Resolve(context.Background())
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Resolve error = %v, want %s", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret-leak") {
					t.Errorf("error holds the command's output: %s", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if got != tt.want {
				t.Errorf("Resolve = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPasswordResolveCanceled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	pw := Password{Command: "sleep 10"}
	start := time.Now()
	_, err := pw.Resolve(ctx)
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("Resolve = %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Resolve took %s after its deadline", d)
	}
}
