package bots_test

import (
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

func TestSectionsReadTheSameInProcessAndOffTheWire(t *testing.T) {
	obs := &world.Observation{Components: map[string]world.Section{"market": {
		"text":    "Markets",
		"markets": []map[string]any{{"id": "rain", "price_yes": 0.25, "volume": 3}},
	}}}
	b, err := cbor.Marshal(obs)
	require.NoError(t, err)
	var wire world.Observation
	require.NoError(t, cbor.Unmarshal(b, &wire))
	for _, o := range []*world.Observation{obs, &wire} {
		sec := bots.SectionOf(o, "market")
		require.Equal(t, "Markets", bots.StrOf(sec["text"]))
		ms := bots.ListOf(sec["markets"])
		require.Len(t, ms, 1)
		m := bots.MapOf(ms[0])
		require.Equal(t, "rain", bots.StrOf(m["id"]))
		require.Equal(t, 0.25, bots.NumOf(m["price_yes"]))
		require.Equal(t, 3.0, bots.NumOf(m["volume"]))
	}
	require.Nil(t, bots.SectionOf(obs, "social"))
	require.Zero(t, bots.NumOf("3"))
}
