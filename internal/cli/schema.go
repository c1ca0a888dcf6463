package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/schema"
	"github.com/spf13/cobra"
)

// schemaAnnotation names, on a command that can print JSON, the schema of what
// it prints (internal/schema).
const schemaAnnotation = "pgbakeoff.schema"

// printsJSON marks cmd as printing the named schema's documents.
func printsJSON(cmd *cobra.Command, name string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[schemaAnnotation] = name
}

// `schema [NAME]`: the JSON Schema of what the commands print as JSON.
func newSchemaCmd(env *Env) *cobra.Command {
	var list bool
	cmd := &cobra.Command{
		Use:   "schema [NAME]",
		Short: "Print the JSON Schema (draft 2020-12) of the JSON that commands print: all of them, or the named one",
		Long: `schema prints the JSON Schema of the JSON documents pgbakeoff prints (--json, and export's
--format json): without a name one document holding them all, with a name that output's
alone (--list names them, with the commands that print each). Every document carries "schema_version", which the schema's $id names
too; it changes whenever what is printed changes. The same files are in docs/schema.`,
		Example: `  pgbakeoff schema --list
  pgbakeoff schema run > run.schema.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				if len(args) > 0 {
					return usageError{fmt.Errorf("--list lists every schema: give no name with it")}
				}
				for _, o := range schema.Outputs() {
					fmt.Fprintf(env.Stdout, "%-12s %s\n", o.Name, o.Title)
				}
				return nil
			}
			var b []byte
			var err error
			if len(args) == 0 {
				b, err = schema.Bundle()
			} else {
				if err := schema.Check(args[0]); err != nil {
					return usageError{err}
				}
				b, err = schema.JSON(args[0])
			}
			if err != nil {
				return err
			}
			_, err = env.Stdout.Write(b)
			return err
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the schemas' names and the commands that print each")
	return cmd
}

// OutputSchema is the name of the schema of what the command line args prints
// on standard output, "" when it prints no JSON: the command's (printsJSON),
// when its --json is set or its --format is json.
func OutputSchema(args []string) string {
	root := NewRoot(&Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }, Now: time.Now})
	c, rest, err := root.Find(args)
	if err != nil || c.Annotations[schemaAnnotation] == "" || c.ParseFlags(rest) != nil {
		return ""
	}
	if on, err := c.Flags().GetBool("json"); err == nil && on {
		return c.Annotations[schemaAnnotation]
	}
	if f, err := c.Flags().GetString("format"); err == nil && f == "json" {
		return c.Annotations[schemaAnnotation]
	}
	return ""
}
