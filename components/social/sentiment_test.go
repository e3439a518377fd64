package social

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSentiment(t *testing.T) {
	require.Less(t, Sentiment("not good"), 0.0)
	require.Greater(t, Sentiment("not bad"), 0.0)
	require.Equal(t, 0.0, Sentiment(""))
	require.Equal(t, 0.0, Sentiment("   "))
	require.Equal(t, 0.0, Sentiment("The council meets on Tuesday at noon."))

	// One word: VADER's normalisation of its valence, s/√(s²+15).
	require.InDelta(t, 1.9/math.Sqrt(1.9*1.9+15), Sentiment("good"), 1e-12)
	require.InDelta(t, -2.5/math.Sqrt(2.5*2.5+15), Sentiment("bad"), 1e-12)
	// Negation: ×-0.74.
	v := -0.74 * 1.9
	require.InDelta(t, v/math.Sqrt(v*v+15), Sentiment("not good"), 1e-12)
	require.Greater(t, Sentiment("isn't bad"), 0.0)
	require.Less(t, Sentiment("I don't support it"), 0.0)

	// Boosters, capitals and exclamation marks strengthen; dampeners weaken.
	require.Greater(t, Sentiment("very good"), Sentiment("good"))
	require.Less(t, Sentiment("slightly good"), Sentiment("good"))
	require.Less(t, Sentiment("very bad"), Sentiment("bad"))
	require.Greater(t, Sentiment("this is GOOD"), Sentiment("this is good"))
	require.Equal(t, Sentiment("good"), Sentiment("GOOD"), "all capitals is no emphasis")
	require.Greater(t, Sentiment("good!!"), Sentiment("good"))
	require.Equal(t, Sentiment("good!!!!"), Sentiment("good!!!!!!!"), "at most four count")
	require.Less(t, Sentiment("bad!!"), Sentiment("bad"))

	// After "but" counts more.
	require.Less(t, Sentiment("the idea is good but the plan is terrible"), 0.0)
	require.Greater(t, Sentiment("the plan is terrible but the idea is great"), 0.0)

	// "no" before a sentiment word negates it instead of counting itself.
	require.Greater(t, Sentiment("no problem"), 0.0)
	require.Less(t, Sentiment("no"), 0.0)

	// Stance words of the scenario's posts.
	require.Greater(t, Sentiment("I strongly support the park. It would be great for everyone!"), 0.5)
	require.Less(t, Sentiment("I oppose the park. It is a bad idea and a waste of money."), -0.5)
	require.Greater(t, Sentiment("I love this"), 0.5)
	require.Less(t, Sentiment("This is terrible"), -0.5)

	for _, s := range []string{"great great great great great great great great!!!!", "worst worst worst worst worst worst!!!!"} {
		v := Sentiment(s)
		require.LessOrEqual(t, math.Abs(v), 1.0)
	}
	require.Equal(t, 0.0, Sentiment("\xff\xfe"), "invalid UTF-8 is no crash")
}
