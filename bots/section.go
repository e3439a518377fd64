package bots

import (
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// Readers for component sections. A section holds JSON-shaped values; in
// process they are the Go values the component built, over the wire they
// are what the CBOR decoder made of them (map[any]any or map[string]any,
// int64, uint64 or float64...). These helpers read both alike, so a bot
// plays the same in process and as a remote agent.

// SectionOf returns the agent's section of a component, or nil.
func SectionOf(obs *world.Observation, component string) map[string]any {
	if obs == nil || obs.Components == nil {
		return nil
	}
	return MapOf(map[string]any(obs.Components[component]))
}

// MapOf reads a map with text keys, or nil.
func MapOf(v any) map[string]any {
	switch m := v.(type) {
	case map[string]any:
		return m
	case world.Section:
		return m
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, e := range m {
			if s, ok := k.(string); ok {
				out[s] = e
			}
		}
		return out
	}
	return nil
}

// ListOf reads a list, or nil.
func ListOf(v any) []any {
	switch l := v.(type) {
	case []any:
		return l
	case []map[string]any:
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = e
		}
		return out
	case []string:
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = e
		}
		return out
	}
	return nil
}

// NumOf reads any number as a float64 (0 when v is not a number).
func NumOf(v any) float64 {
	f, _ := tools.Number(v)
	return f
}

// StrOf reads text ("" when v is not text).
func StrOf(v any) string {
	s, _ := v.(string)
	return s
}
