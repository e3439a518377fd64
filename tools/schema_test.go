package tools_test

import (
	"strings"
	"testing"

	"github.com/arena-sim/arena/tools"
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
