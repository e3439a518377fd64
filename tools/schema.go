package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/arena-sim/arena/internal/fuzzy"
)

// Schema is the subset of JSON Schema that tool parameters use. It marshals to
// standard JSON Schema, so it can be handed to OpenAI-style function calling as is.
type Schema struct {
	Type                 string             `json:"type,omitempty"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Enum                 []string           `json:"enum,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	ExclusiveMinimum     *float64           `json:"exclusiveMinimum,omitempty"`
	MinItems             *int               `json:"minItems,omitempty"`
	MaxItems             *int               `json:"maxItems,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	MaxLength            *int               `json:"maxLength,omitempty"`
	Default              any                `json:"default,omitempty"`
	AdditionalProperties *bool              `json:"additionalProperties,omitempty"`
}

// Ptr returns a pointer to v, for the optional numeric fields of Schema.
func Ptr[T any](v T) *T { return &v }

// Object builds an object schema that refuses unknown properties.
func Object(props map[string]*Schema, required ...string) *Schema {
	if props == nil {
		props = map[string]*Schema{}
	}
	return &Schema{Type: "object", Properties: props, Required: required, AdditionalProperties: Ptr(false)}
}

// Map is the schema as plain JSON values (maps, slices, strings, numbers), as
// tool lists for language-model APIs and MCP carry it. A nil schema is an
// object without properties, and an object always has "properties".
func (s *Schema) Map() map[string]any {
	if s == nil {
		s = Object(nil)
	}
	b, _ := json.Marshal(s)
	var m map[string]any
	json.Unmarshal(b, &m)
	return typed(m)
}

// typed gives every schema a type, as the vendors' strict modes want:
// objects get their (possibly empty) properties and required lists, and a
// parameter that takes any scalar (apply_policy's value) becomes anyOf
// string, number, boolean.
func typed(m map[string]any) map[string]any {
	if _, ok := m["type"]; !ok {
		m["anyOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}, map[string]any{"type": "boolean"}}
	}
	if items, ok := m["items"].(map[string]any); ok {
		m["items"] = typed(items)
	}
	if m["type"] != "object" {
		return m
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	for k, p := range props {
		props[k] = typed(p.(map[string]any))
	}
	m["properties"] = props
	if _, ok := m["required"]; !ok {
		m["required"] = []any{}
	}
	return m
}

// ParamError is a parameter that does not fit its schema.
type ParamError struct {
	Path   string
	Reason string
}

func (e *ParamError) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	// The path may hold a name the caller made up: cut it before echoing.
	return fmt.Sprintf("param '%s' %s", fuzzy.Clip(e.Path), e.Reason)
}

// Validate checks params against an object schema and returns them normalised:
// every number becomes a float64 (integers are checked to be whole), so that
// handlers read one type whatever the transport decoded (JSON float64, CBOR
// int64/uint64/float32, ...). NaN and ±Inf are refused. Empty params (nil
// or not) are returned as they are: read them, do not write to them.
func (s *Schema) Validate(params map[string]any) (map[string]any, error) {
	if len(params) == 0 {
		// Nothing to normalise: only the required fields can be wrong. Most
		// decisions are an idle without parameters: a fresh empty map for
		// each was a third of a bench run's allocations.
		for _, r := range s.Required {
			return nil, &ParamError{Path: r, Reason: "is required"}
		}
		return params, nil
	}
	v, err := s.check("", params)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if _, ok := Number(v); ok {
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// Number converts any numeric Go value (what JSON and CBOR decoders make of a
// number, including the big.Int CBOR gives for integers below −2⁶³) to a
// float64, and reports whether v was a number.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case big.Int:
		f, _ := new(big.Float).SetInt(&n).Float64()
		return f, true
	case *big.Int:
		if n == nil {
			return 0, false
		}
		f, _ := new(big.Float).SetInt(n).Float64()
		return f, true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}

func (s *Schema) check(path string, v any) (any, error) {
	out, _, err := s.checkSame(path, v)
	return out, err
}

// checkSame is check, and reports whether what it returns is v itself: a
// value already in its normal form is returned as it came, and an object or
// array is copied only when one of its values changes, so that validating
// the parameters most decisions bring allocates nothing.
func (s *Schema) checkSame(path string, v any) (any, bool, error) {
	fail := func(format string, args ...any) (any, bool, error) {
		return nil, false, &ParamError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fail("must be an object, got %s", typeName(v))
		}
		for _, r := range s.Required {
			if _, ok := m[r]; !ok {
				return nil, false, &ParamError{Path: join(path, r), Reason: "is required"}
			}
		}
		var buf [8]string
		keys := buf[:0]
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out map[string]any // a copy of m, once a value changes
		for _, k := range keys {
			cv, same := m[k], true
			if ps, ok := s.Properties[k]; ok {
				var err error
				if cv, same, err = ps.checkSame(join(path, k), cv); err != nil {
					return nil, false, err
				}
			} else if s.AdditionalProperties != nil && !*s.AdditionalProperties {
				return nil, false, &ParamError{Path: join(path, k), Reason: "is not a parameter of this tool (known: " + strings.Join(sortedProps(s), ", ") + ")"}
			}
			if !same && out == nil {
				out = maps.Clone(m)
			}
			if out != nil {
				out[k] = cv
			}
		}
		if out == nil {
			return v, true, nil
		}
		return out, false, nil
	case "array":
		a, ok := v.([]any)
		if !ok {
			return fail("must be an array, got %s", typeName(v))
		}
		if s.MinItems != nil && len(a) < *s.MinItems {
			return fail("must have at least %d items, got %d", *s.MinItems, len(a))
		}
		if s.MaxItems != nil && len(a) > *s.MaxItems {
			return fail("must have at most %d items, got %d", *s.MaxItems, len(a))
		}
		if s.Items == nil {
			return v, true, nil // v, not a: boxing a again would allocate
		}
		var out []any // a copy of a, once an item changes
		for i, e := range a {
			cv, same, err := s.Items.checkSame("", e)
			if err != nil {
				// Again, naming the item: the path costs an allocation
				// per item, and only failures need it.
				_, _, err = s.Items.checkSame(fmt.Sprintf("%s[%d]", path, i), e)
				return nil, false, err
			}
			if !same && out == nil {
				out = slices.Clone(a)
			}
			if out != nil {
				out[i] = cv
			}
		}
		if out == nil {
			return v, true, nil
		}
		return out, false, nil
	case "number", "integer":
		f, ok := Number(v)
		if !ok {
			return fail("must be a number, got %s", typeName(v))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fail("must be a finite number, got %v", f)
		}
		if s.Type == "integer" && f != math.Trunc(f) {
			return fail("must be a whole number, got %v", f)
		}
		if s.Minimum != nil && f < *s.Minimum {
			return fail("must be at least %v, got %v", *s.Minimum, f)
		}
		if s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum {
			return fail("must be greater than %v, got %v", *s.ExclusiveMinimum, f)
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fail("must be at most %v, got %v", *s.Maximum, f)
		}
		if _, ok := v.(float64); ok {
			return v, true, nil // already what it becomes: no need to box it again
		}
		return f, false, nil
	case "string":
		str, ok := v.(string)
		if !ok {
			return fail("must be a string, got %s", typeName(v))
		}
		n := len([]rune(str))
		if s.MinLength != nil && n < *s.MinLength {
			return fail("must be at least %d characters, got %d", *s.MinLength, n)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return fail("must be at most %d characters, got %d", *s.MaxLength, n)
		}
		if len(s.Enum) > 0 {
			for _, e := range s.Enum {
				if e == str {
					return v, true, nil
				}
			}
			return fail("must be one of %s, got %q", strings.Join(s.Enum, ", "), fuzzy.Clip(str))
		}
		return v, true, nil
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fail("must be true or false, got %s", typeName(v))
		}
		return v, true, nil
	case "":
		return v, true, nil
	}
	return fail("has an unsupported schema type %q", s.Type)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedProps(s *Schema) []string {
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}
