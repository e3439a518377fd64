package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/arena-sim/arena/scenarios"
	"github.com/stretchr/testify/require"
)

// jsonTypes are the types JSON Schema knows.
var jsonTypes = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// checkSchema reports what breaks the JSON Schema metaschema's shape for the
// keywords tools use, or, when strict, OpenAI's strict-mode rules: every
// schema typed, every object closed with all its properties required, no
// unsupported keyword.
func checkSchema(path string, v any, strict bool) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return []string{path + ": not an object"}
	}
	var bad []string
	add := func(f string, a ...any) { bad = append(bad, path+": "+fmt.Sprintf(f, a...)) }
	var types []string
	switch t := m["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			s, _ := x.(string)
			types = append(types, s)
		}
	case nil:
		alts, ok := m["anyOf"].([]any)
		if !ok || len(alts) == 0 {
			add("no type")
		}
		for i, a := range alts {
			bad = append(bad, checkSchema(fmt.Sprintf("%s.anyOf[%d]", path, i), a, strict)...)
		}
	default:
		add("type is %T", t)
	}
	for _, t := range types {
		if !slices.Contains(jsonTypes, t) {
			add("unknown type %q", t)
		}
	}
	for _, k := range []string{"minLength", "maxLength", "minItems", "maxItems"} {
		if x, ok := m[k]; ok {
			if f, ok := x.(float64); !ok || f < 0 || f != float64(int(f)) {
				add("%s is not a non-negative integer", k)
			}
			if strict && (k == "minLength" || k == "maxLength") {
				add("%s is not supported in strict mode", k)
			}
		}
	}
	if _, ok := m["default"]; ok && strict {
		add("default is not supported in strict mode")
	}
	if d, ok := m["description"]; ok {
		if _, ok := d.(string); !ok {
			add("description is not a string")
		}
	}
	if items, ok := m["items"]; ok {
		bad = append(bad, checkSchema(path+".items", items, strict)...)
	}
	if !slices.Contains(types, "object") {
		return bad
	}
	props, ok := m["properties"].(map[string]any)
	if !ok {
		add("properties is not an object")
	}
	req, ok := m["required"].([]any)
	if !ok {
		add("required is not an array (%v)", m["required"])
	}
	var names []string
	for _, r := range req {
		s, ok := r.(string)
		if !ok || props[s] == nil {
			add("required names %v, which is not a property", r)
		}
		names = append(names, s)
	}
	keys := make([]string, 0, len(props))
	for k, p := range props {
		keys = append(keys, k)
		bad = append(bad, checkSchema(path+"."+k, p, strict)...)
	}
	if strict {
		sort.Strings(keys)
		sort.Strings(names)
		if !slices.Equal(keys, names) {
			add("strict: required %v is not every property %v", names, keys)
		}
		if m["additionalProperties"] != false {
			add("strict: additionalProperties is not false")
		}
	}
	return bad
}

// TestToolExportsAreValid exports every built-in scenario's tools in every
// vendor format and checks each schema; OpenAI's are checked against its
// strict-mode rules, since they are marked strict.
func TestToolExportsAreValid(t *testing.T) {
	for _, name := range scenarios.Builtin() {
		for _, format := range []string{"openai", "anthropic", "mcp"} {
			out, _, err := arena(t, "tools", "--scenario", name, "--format", format)
			require.NoError(t, err)
			var v any
			require.NoError(t, json.Unmarshal([]byte(out), &v))
			var list []any
			switch format {
			case "mcp":
				list = v.(map[string]any)["tools"].([]any)
			default:
				list = v.([]any)
			}
			require.NotEmpty(t, list)
			for _, e := range list {
				tool := e.(map[string]any)
				var schema any
				strict := false
				switch format {
				case "openai":
					fn := tool["function"].(map[string]any)
					tool, schema, strict = fn, fn["parameters"], fn["strict"] == true
					require.True(t, strict, "%s: openai tools are strict", name)
				case "anthropic":
					schema = tool["input_schema"]
				case "mcp":
					schema = tool["inputSchema"]
				}
				where := fmt.Sprintf("%s %s %v", name, format, tool["name"])
				require.NotEmpty(t, tool["name"], where)
				require.IsType(t, "", tool["description"], where)
				require.Equal(t, "object", schema.(map[string]any)["type"], where)
				require.Empty(t, checkSchema(where, schema, strict))
			}
		}
	}
}

// TestCheckSchemaCatches: the checker finds what the issue found.
func TestCheckSchemaCatches(t *testing.T) {
	for _, c := range []struct {
		schema string
		strict bool
	}{
		{`{"type":"object","properties":{},"required":null,"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"value":{"description":"any"}},"required":["value"],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":[],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, true},
		{`{"type":"object","properties":{"a":{"type":"string","maxLength":3}},"required":["a"],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"a":{"type":"text"}},"required":[]}`, false},
	} {
		var v any
		require.NoError(t, json.Unmarshal([]byte(c.schema), &v))
		require.NotEmpty(t, checkSchema("s", v, c.strict), c.schema)
	}
}
