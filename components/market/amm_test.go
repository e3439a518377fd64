package market

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The reference's AMM numbers (reference-subsystems.md A4 and A9), under
// the seed maker.

func seedPool(y, n float64) Pool { return Pool{Yes: y, No: n, K: y * n, Rule: AMMSeed} }

func TestPricesOfBalancedAndSkewedPools(t *testing.T) {
	p := seedPool(100, 100)
	require.Equal(t, 0.5, p.PriceYes())
	require.Equal(t, 0.5, p.PriceNo())
	q := seedPool(150, 50)
	require.InDelta(t, 1, q.PriceYes()+q.PriceNo(), 1e-12)
	require.Equal(t, 0.25, q.PriceYes())
}

func TestSeedMakerBuyYesTenFromAHundredEach(t *testing.T) {
	p := seedPool(100, 100)
	shares := p.Buy(true, 10)
	require.InDelta(t, 9.0909, shares, 1e-4)
	require.InDelta(t, 0.5475, p.PriceYes(), 1e-4)
	require.InEpsilon(t, 100*100, p.Yes*p.No, 1e-3, "k is unchanged (rel 0.1%)")
	proceeds := p.Sell(true, shares)
	require.InDelta(t, 10, proceeds, 1e-9, "selling those shares returns exactly 10")
	require.InDelta(t, 0.5, p.PriceYes(), 1e-12)
}

func TestSeedMakerSeededPoolBuys(t *testing.T) {
	p := NewPool(AMMSeed, 0.5, 500)
	require.Equal(t, Pool{Yes: 500, No: 500, K: 250000, Rule: AMMSeed}, p)
	q := p
	require.InDelta(t, 45.4545, q.Buy(true, 50), 1e-4)
	require.InDelta(t, 0.5475, q.PriceYes(), 1e-4)
	q = p
	require.InDelta(t, 250, q.Buy(true, 500), 1e-9)
	require.InDelta(t, 0.8, q.PriceYes(), 1e-12)
}

// The fair maker by hand: reserves 500/500, buy YES for 50 mints 50
// complete sets (550/550), and the pool keeps 250000/550 = 454.5454 YES, so
// the buyer gets 550 − 454.5454 = 95.4545 shares (50 + 45.4545: the 50 YES
// minted and the 45.4545 the seed maker would give) and the price moves as
// under the seed maker, to 0.5475. Selling them back burns 50 sets.
func TestFairMakerSeededPoolBuys(t *testing.T) {
	p := NewPool(AMMFair, 0.5, 500)
	require.Equal(t, Pool{Yes: 500, No: 500, K: 250000, Rule: AMMFair}, p)
	q := p
	require.InDelta(t, 95.4545, q.Buy(true, 50), 1e-4)
	require.InDelta(t, 454.5454, q.Yes, 1e-4)
	require.InDelta(t, 550, q.No, 1e-12)
	require.InDelta(t, 0.5475, q.PriceYes(), 1e-4)
	require.InDelta(t, 50, q.Sell(true, 95.45454545454545), 1e-9)
	require.InDelta(t, 500, q.Yes, 1e-9)
	require.InDelta(t, 500, q.No, 1e-9)
	q = p
	require.InDelta(t, 750, q.Buy(true, 500), 1e-9, "1000 sets minted, the pool keeps 250 YES")
	require.InDelta(t, 0.8, q.PriceYes(), 1e-12)
	// NO at 0.6: reserves 400/600; buy NO for 100 → 500 YES, 600·400/500 = 480 NO.
	q = NewPool(AMMFair, 0.6, 500)
	require.InDelta(t, 220, q.Buy(false, 100), 1e-9)
	require.InDelta(t, 480, q.No, 1e-9)
	require.InDelta(t, 480.0/980, q.PriceYes(), 1e-12)
}

// A fair share costs its price: the first cent buys 0.01/price shares, for
// every price and side, while the seed maker's YES share costs p/(1−p).
func TestFairMakerMarginalCostIsThePrice(t *testing.T) {
	for _, price := range []float64{0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99} {
		for _, yes := range []bool{true, false} {
			p := NewPool(AMMFair, price, 500)
			want := p.Price(yes)
			require.InEpsilon(t, want, 1e-6/p.Buy(yes, 1e-6), 1e-6, "p=%v yes=%v", price, yes)
		}
		s := NewPool(AMMSeed, price, 500)
		require.InEpsilon(t, price/(1-price), 1e-6/s.Buy(true, 1e-6), 1e-6, "the seed maker's YES share costs p/(1−p)")
	}
}

func TestSeedFromPriceAndLiquidity(t *testing.T) {
	for _, rule := range []AMM{AMMFair, AMMSeed} {
		p := NewPool(rule, 0.6, 500)
		require.InDelta(t, 400, p.Yes, 1e-9)
		require.InDelta(t, 600, p.No, 1e-9)
		require.InDelta(t, 0.6, p.PriceYes(), 1e-12)
	}
}

func TestBuyingRaisesTheBoughtSidesPrice(t *testing.T) {
	for _, rule := range []AMM{AMMFair, AMMSeed} {
		for _, yes := range []bool{true, false} {
			p := NewPool(rule, 0.5, 100)
			before := p.Price(yes)
			p.Buy(yes, 10)
			require.Greater(t, p.Price(yes), before, "%s yes=%v", rule, yes)
		}
		p := NewPool(rule, 0.5, 100)
		p.Buy(false, 10)
		require.InDelta(t, 9.0909, 100-p.No, 1e-4, "%s: buying NO mirrors buying YES", rule)
	}
}

func TestBuyThenSellReturnsTheMoney(t *testing.T) {
	for _, rule := range []AMM{AMMFair, AMMSeed} {
		for _, yes := range []bool{true, false} {
			p := NewPool(rule, 0.37, 500)
			s := p.Buy(yes, 10)
			require.InDelta(t, 10, p.Sell(yes, s), 1e-9, "%s yes=%v", rule, yes)
			require.InDelta(t, 0.37, p.PriceYes(), 1e-12)
		}
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
