package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/tools"
)

func cmdScenarios(args []string, stdout io.Writer) error {
	fs := newFlags("scenarios", stdout)
	if err := fs.Parse(args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSIZE\tAGENTS\tTICKS\tDESCRIPTION")
	for _, name := range scenarios.Builtin() {
		sc, err := scenarios.Load(name)
		if err != nil {
			return fmt.Errorf("built-in scenario %s: %w", name, err)
		}
		w, d := sc.Size[0], sc.Size[1]
		if sc.Bounds != nil {
			w, d = sc.Bounds.Max[0]-sc.Bounds.Min[0], sc.Bounds.Max[1]-sc.Bounds.Min[1]
		}
		fmt.Fprintf(tw, "%s\t%gx%g\t%d (max %d)\t%d\t%s\n", sc.Name, w, d, sc.Agents.Count, sc.Agents.Max, sc.TimeLimit(), sc.Description)
	}
	return tw.Flush()
}

func cmdTools(args []string, stdout io.Writer) error {
	fs := newFlags("tools", stdout)
	scenario := fs.String("scenario", "foraging", "scenario whose tools to list (components add tools)")
	format := fs.String("format", "text", "text, json (protocol form) or openai (function-calling form)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sc, err := scenarios.Load(*scenario)
	if err != nil {
		return err
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	if err != nil {
		return err
	}
	reg, err := tools.ForWorld(w)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	switch *format {
	case "openai":
		return enc.Encode(reg.OpenAI())
	case "json":
		return enc.Encode(reg.Specs())
	case "text":
		for _, t := range reg.Tools() {
			kind := "action"
			if t.Query {
				kind = "action or mid-turn query"
			}
			fmt.Fprintf(stdout, "%s (%s)\n  %s\n", t.Name, kind, t.Description)
			for _, name := range slices.Sorted(maps.Keys(t.Parameters.Properties)) {
				p := t.Parameters.Properties[name]
				req := ""
				for _, r := range t.Parameters.Required {
					if r == name {
						req = ", required"
					}
				}
				fmt.Fprintf(stdout, "    %-13s %s%s  %s\n", name, p.Type, req, p.Description)
			}
			fmt.Fprintln(stdout)
		}
		return nil
	}
	return fmt.Errorf("tools: unknown format %q (text, json, openai)", *format)
}
