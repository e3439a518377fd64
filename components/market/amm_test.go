package market

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The reference's AMM numbers (reference-subsystems.md A4 and A9).

func TestPricesOfBalancedAndSkewedPools(t *testing.T) {
	p := Pool{Yes: 100, No: 100, K: 100 * 100}
	require.Equal(t, 0.5, p.PriceYes())
	require.Equal(t, 0.5, p.PriceNo())
	q := Pool{Yes: 150, No: 50, K: 150 * 50}
	require.InDelta(t, 1, q.PriceYes()+q.PriceNo(), 1e-12)
	require.Equal(t, 0.25, q.PriceYes())
}

func TestBuyYesTenFromAHundredEach(t *testing.T) {
	p := Pool{Yes: 100, No: 100, K: 100 * 100}
	shares := p.Buy(true, 10)
	require.InDelta(t, 9.0909, shares, 1e-4)
	require.InDelta(t, 0.5475, p.PriceYes(), 1e-4)
	require.InEpsilon(t, 100*100, p.Yes*p.No, 1e-3, "k is unchanged (rel 0.1%)")
	proceeds := p.Sell(true, shares)
	require.InDelta(t, 10, proceeds, 1e-9, "selling those shares returns exactly 10")
	require.InDelta(t, 0.5, p.PriceYes(), 1e-12)
}

func TestSeededPoolBuys(t *testing.T) {
	p := Seed(0.5, 500)
	require.Equal(t, Pool{Yes: 500, No: 500, K: 250000}, p)
	q := p
	require.InDelta(t, 45.4545, q.Buy(true, 50), 1e-4)
	require.InDelta(t, 0.5475, q.PriceYes(), 1e-4)
	q = p
	require.InDelta(t, 250, q.Buy(true, 500), 1e-9)
	require.InDelta(t, 0.8, q.PriceYes(), 1e-12)
}

func TestSeedFromPriceAndLiquidity(t *testing.T) {
	p := Seed(0.6, 500)
	require.InDelta(t, 400, p.Yes, 1e-9)
	require.InDelta(t, 600, p.No, 1e-9)
	require.InDelta(t, 0.6, p.PriceYes(), 1e-12)
}

func TestBuyingRaisesTheBoughtSidesPrice(t *testing.T) {
	for _, yes := range []bool{true, false} {
		p := Seed(0.5, 100)
		before := p.Price(yes)
		p.Buy(yes, 10)
		require.Greater(t, p.Price(yes), before, "yes=%v", yes)
	}
	p := Seed(0.5, 100)
	p.Buy(false, 10)
	require.InDelta(t, 9.0909, 100-p.No, 1e-4, "buying NO mirrors buying YES")
}

func TestBuyThenSellReturnsTheMoney(t *testing.T) {
	for _, yes := range []bool{true, false} {
		p := Seed(0.37, 500)
		s := p.Buy(yes, 10)
		require.InEpsilon(t, 10, p.Sell(yes, s), 0.01)
	}
}

func TestSlugs(t *testing.T) {
	require.Equal(t, "will_the_fed_cut_by_50bp", Slug("Will the Fed cut by 50bp?"))
	require.Equal(t, "will_x", Slug("Will X?"))
	require.Equal(t, "a_b_c", Slug("  --A  b!!c..."))
	require.Equal(t, "", Slug("?!"))
	require.Equal(t, "caf_cr_me", Slug("Café crème"), "non-ASCII letters are outside [a-z0-9]")
	long := Slug("Will the European Central Bank raise its deposit rate before the end of the year?")
	require.Len(t, long, 40)
	require.Equal(t, "will_the_european_central_bank_raise_its", long)
}

func TestCollidingSlugsGetSuffixes(t *testing.T) {
	taken := map[string]bool{}
	has := func(id string) bool { return taken[id] }
	var ids []string
	for i := 0; i < 12; i++ {
		// The same first 40 characters, different endings.
		q := fmt.Sprintf("Will the European Central Bank raise its deposit rate in month %d?", i)
		id := UniqueSlug(q, has)
		require.False(t, taken[id], "ids are unique")
		require.LessOrEqual(t, len(id), 45)
		taken[id] = true
		ids = append(ids, id)
	}
	base := "will_the_european_central_bank_raise_its"
	require.Equal(t, base, ids[0])
	require.Equal(t, base+"_2", ids[1])
	require.Equal(t, base+"_9", ids[8])
	require.Equal(t, base+"_10", ids[9], "base[:45-len(\"_10\")] is still the whole 40-character base")
	require.True(t, strings.HasPrefix(ids[11], base))
}

func TestFloor2NeverShowsMoreThanIsHeld(t *testing.T) {
	require.Equal(t, 1.99, Floor2(1.994))
	require.LessOrEqual(t, Floor2(1.994), 1.994)
	require.Equal(t, 0.29, Floor2(0.29))
	require.Equal(t, 9.09, Floor2(9.090909))
	require.Equal(t, 0.0, Floor2(0.004))
	require.Equal(t, 0.0, Floor2(0))
	require.Equal(t, 0.0, Floor2(-1))
	require.Equal(t, 2.0, Floor2(2))
	for x := 0.0; x < 50; x += 0.0137 {
		require.LessOrEqual(t, Floor2(x), x)
		require.Greater(t, Floor2(x), x-0.01)
	}
}
