package study

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Password says where a dsn target's password comes from. Exactly one of Env
// and Command is set.
type Password struct {
	Pos     Pos
	Env     string // an environment variable holding the password
	Command string // a shell command printing the password
}

// String says where the password comes from without revealing it.
func (p *Password) String() string {
	if p.Env != "" {
		return "env " + p.Env
	}
	return "command " + p.Command
}

// Resolve returns the password: the environment variable's value, or the
// command's standard output without its trailing newline. The command runs
// with sh -c in the current directory. Errors never hold the password.
func (p *Password) Resolve(ctx context.Context) (string, error) {
	if p.Env != "" {
		v, ok := os.LookupEnv(p.Env)
		switch {
		case !ok:
			return "", fmt.Errorf("password: environment variable %s is not set", p.Env)
		case v == "":
			return "", fmt.Errorf("password: environment variable %s is empty", p.Env)
		}
		return v, nil
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "sh", "-c", p.Command)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// When ctx ends, sh is killed but a child of it may still hold its
	// output open; stop waiting for that soon after.
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		// Say why from stderr; stdout may hold the password.
		var why string
		if ctx.Err() != nil {
			why = " (" + ctx.Err().Error() + ")"
		}
		if line := firstLine(stderr.String()); line != "" {
			why += ": " + line
		}
		return "", fmt.Errorf("password command %q: %w%s", p.Command, err, why)
	}
	out := stdout.String()
	out = strings.TrimSuffix(out, "\n")
	out = strings.TrimSuffix(out, "\r")
	if out == "" {
		return "", fmt.Errorf("password command %q printed nothing", p.Command)
	}
	return out, nil
}

// firstLine is the first non-blank line of s, cut to a readable length.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			if r := []rune(line); len(r) > 200 {
				line = string(r[:200]) + "…"
			}
			return line
		}
	}
	return ""
}
