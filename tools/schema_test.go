package tools_test

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/tools"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

func TestParamErrorsDoNotEchoHugeInput(t *testing.T) {
	s := tools.Object(map[string]*tools.Schema{"mode": {Type: "string", Enum: []string{"a", "b"}}}, "mode")
	huge := strings.Repeat("x", 100_000)
	_, err := s.Validate(map[string]any{"mode": huge})
	require.ErrorContains(t, err, "must be one of a, b")
	require.Less(t, len(err.Error()), 300)
	_, err = s.Validate(map[string]any{"mode": "a", huge: 1.0})
	require.ErrorContains(t, err, "is not a parameter of this tool")
	require.Less(t, len(err.Error()), 300)
}

// CBOR integers below −2⁶³ decode to big.Int: they are numbers like any
// other, checked against the schema's bounds, and no error names a Go type.
func TestCBORBigIntegersAreNumbers(t *testing.T) {
	codec, err := ipc.NewCodec(ipc.Limits{})
	require.NoError(t, err)
	minus2to64 := []byte{0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff} // −1 − (2⁶⁴−1)
	frame, err := codec.Marshal(map[string]any{"type": "decision", "tick": 0, "tool": "buy", "params": map[string]any{"amount": cbor.RawMessage(minus2to64)}})
	require.NoError(t, err)
	msg, err := codec.Decode(frame)
	require.NoError(t, err)
	amount := msg.(*ipc.Decision).Params["amount"]
	require.IsType(t, big.Int{}, amount, "what the CBOR decoder makes of −2⁶⁴")

	s := tools.Object(map[string]*tools.Schema{"amount": {Type: "number", ExclusiveMinimum: tools.Ptr(0.0)}}, "amount")
	_, err = s.Validate(map[string]any{"amount": amount})
	require.EqualError(t, err, "param 'amount' must be greater than 0, got -1.8446744073709552e+19")
	f, ok := tools.Number(amount)
	require.True(t, ok)
	require.Equal(t, -math.Pow(2, 64), f)
	f, ok = tools.Number(new(big.Int).Lsh(big.NewInt(1), 70))
	require.True(t, ok)
	require.Equal(t, math.Pow(2, 70), f)
	_, ok = tools.Number((*big.Int)(nil))
	require.False(t, ok)
	_, err = s.Validate(map[string]any{"amount": "x"})
	require.EqualError(t, err, "param 'amount' must be a number, got string")
}

// TestValidateNormalisesAndNamesTheFailingItem: numbers of every Go type
// come out as float64, other values as they went in, and a failure names the
// array item (and the object field) that failed.
func TestValidateNormalisesAndNamesTheFailingItem(t *testing.T) {
	s := tools.Object(map[string]*tools.Schema{
		"target": {Type: "array", Items: &tools.Schema{Type: "number", Maximum: tools.Ptr(10.0)}},
		"name":   {Type: "string"},
		"flag":   {Type: "boolean"},
		"nested": tools.Object(map[string]*tools.Schema{
			"list": {Type: "array", Items: &tools.Schema{Type: "integer"}},
		}),
	})
	clean, err := s.Validate(map[string]any{"target": []any{1, int64(2), 3.5}, "name": "x", "flag": true,
		"nested": map[string]any{"list": []any{uint8(4)}}})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"target": []any{1.0, 2.0, 3.5}, "name": "x", "flag": true,
		"nested": map[string]any{"list": []any{4.0}}}, clean)
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"target": []any{1.0, 11.0}}, "param 'target[1]' must be at most 10, got 11"},
		{map[string]any{"target": []any{"a"}}, "param 'target[0]' must be a number, got string"},
		{map[string]any{"nested": map[string]any{"list": []any{1, 2.5}}}, "param 'nested.list[1]' must be a whole number, got 2.5"},
	} {
		_, err := s.Validate(tc.params)
		require.EqualError(t, err, tc.want)
	}
}

// TestEmptyParamsAreNotCopied: a call without parameters (most decisions are
// an idle) validates without allocating, and its parameters come back as
// they went in; a missing required parameter still fails.
func TestEmptyParamsAreNotCopied(t *testing.T) {
	s := tools.Object(map[string]*tools.Schema{"x": {Type: "number"}})
	for _, params := range []map[string]any{nil, {}} {
		clean, err := s.Validate(params)
		require.NoError(t, err)
		require.Empty(t, clean)
		require.Equal(t, params == nil, clean == nil)
		require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = s.Validate(params) }))
	}
	_, err := tools.Object(map[string]*tools.Schema{"x": {Type: "number"}}, "x").Validate(nil)
	require.EqualError(t, err, "param 'x' is required")
}

// TestNormalParamsAreNotCopied: parameters already in their normal form
// (numbers as float64, arrays and objects of such) are returned as they came,
// without an allocation; parameters that need normalising are copied, at
// every level that changes, and the caller's map is left as it was.
func TestNormalParamsAreNotCopied(t *testing.T) {
	w, reg := setup(t)
	_ = w
	mt, ok := reg.Lookup("move_to")
	require.True(t, ok)
	move := mt.Parameters
	normal := map[string]any{"target": []any{1.5, 0.0, -2.0}, "speed": 1.5}
	clean, err := move.Validate(normal)
	require.NoError(t, err)
	require.Equal(t, normal, clean)
	clean["marker"] = true // the same map: the mark shows in normal
	require.Contains(t, normal, "marker")
	delete(normal, "marker")
	require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = move.Validate(normal) }))

	ints := map[string]any{"target": []any{1.5, int64(2), -2.0}, "speed": 1.5}
	clean, err = move.Validate(ints)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"target": []any{1.5, 2.0, -2.0}, "speed": 1.5}, clean)
	require.Equal(t, map[string]any{"target": []any{1.5, int64(2), -2.0}, "speed": 1.5}, ints, "the caller's parameters are unchanged")

	nested := map[string]any{"target_x": 1, "target_z": 2.5}
	clean, err = move.Validate(nested)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"target_x": 1.0, "target_z": 2.5}, clean)
	require.Equal(t, 1, nested["target_x"])
}
