package market

import (
	"math"
	"strconv"
	"strings"
)

// AMM names a market maker: how a pool turns money into shares and shares
// into money. Both keep the product of the reserves constant and price YES
// at n/(y+n); they differ in what a trade puts into the pool.
type AMM string

const (
	// AMMFair is the default: a fixed-product market maker over complete
	// sets (Gnosis/Omen's FPMM, the family of Manifold's CPMM). Money buys
	// complete sets (1 YES + 1 NO for each unit) and the pool hands out the
	// bought side so that y·n holds, so the marginal cost of a share is its
	// price and a winning share, which pays 1, is worth what it cost.
	AMMFair AMM = "fair"
	// AMMSeed is the reference's (SimSwarm's, seed 002's) rule: the money
	// itself joins the other side's reserve. A marginal YES share then costs
	// n/y = p/(1−p), not p, so with a payout of 1 per winning share a trader
	// who buys the right side at 50% or more loses money. Kept to reproduce
	// reference runs.
	AMMSeed AMM = "seed"
)

// Pool is a constant-product automated market maker for one yes/no
// question: Yes is the YES reserve y, No the NO reserve n, and K = y·n,
// fixed when the pool is seeded, stays constant across trades. There are no
// fees. Rule picks the maker (AMMFair unless it is AMMSeed).
//
//	price_yes = n/(y+n)            price_no = y/(y+n)
//	seed(p, L):  y = 2L(1−p), n = 2Lp
//
// The fair maker (AMMFair), buying YES for a and selling s YES for r:
//
//	buy:   n' = n+a, y' = K/n',        shares = a + (y − y') = a + y·a/(n+a)
//	sell:  n' = n−r, y' = y+s−r,       r solves (y+s−r)(n−r) = K
//
// The seed maker (AMMSeed):
//
//	buy:   n' = n+a, y' = K/n',        shares = y − y'
//	sell:  y' = y+s, n' = K/y',        proceeds = n − n'
//
// NO mirrors YES with y and n swapped. Both makers move the reserves alike
// on a buy; the fair one also hands out the a YES shares minted with the NO
// that joined the pool.
type Pool struct {
	Yes, No, K float64
	Rule       AMM
}

// NewPool returns the pool of a maker for an initial YES price p
// (0 < p < 1) and a liquidity L: reserves y = 2L(1−p) and n = 2Lp, so that
// price_yes = p.
func NewPool(rule AMM, p, liquidity float64) Pool {
	y, n := 2*liquidity*(1-p), 2*liquidity*p
	return Pool{Yes: y, No: n, K: y * n, Rule: rule}
}

// PriceYes is the price of a YES share, n/(y+n).
func (p *Pool) PriceYes() float64 { return p.No / (p.Yes + p.No) }

// PriceNo is the price of a NO share, y/(y+n); the two prices sum to 1.
func (p *Pool) PriceNo() float64 { return p.Yes / (p.Yes + p.No) }

// Price is the price of one side (yes: true).
func (p *Pool) Price(yes bool) float64 {
	if yes {
		return p.PriceYes()
	}
	return p.PriceNo()
}

// sides returns the reserve of the side traded and of the other side.
func (p *Pool) sides(yes bool) (same, other *float64) {
	if yes {
		return &p.Yes, &p.No
	}
	return &p.No, &p.Yes
}

// QuoteBuy returns the shares that amount buys and the reserves after the
// trade, without trading.
func (p *Pool) QuoteBuy(yes bool, amount float64) (shares float64, after Pool) {
	after = *p
	same, other := after.sides(yes)
	if p.Rule == AMMSeed {
		old := *same
		*other += amount
		*same = p.K / *other
		return old - *same, after
	}
	// Mint amount complete sets: the other side's amount joins the pool,
	// and the pool gives out the bought side's amount plus extra, so that
	// (same − extra)(other + amount) = same·other. Written so that
	// shares > amount whenever the reserves are positive.
	extra := *same * amount / (*other + amount)
	*other += amount
	*same -= extra
	return amount + extra, after
}

// QuoteSell returns the proceeds of selling shares and the reserves after the
// trade, without trading.
func (p *Pool) QuoteSell(yes bool, shares float64) (proceeds float64, after Pool) {
	after = *p
	same, other := after.sides(yes)
	if p.Rule == AMMSeed {
		old := *other
		*same += shares
		*other = p.K / *same
		return old - *other, after
	}
	// The shares join the pool, which then burns r complete sets for r
	// money: (same + s − r)(other − r) = same·other, the smaller root of
	// r² − (same+s+other)·r + s·other = 0, in the form that does not
	// cancel (the discriminant is (s−other)² + same·(same+2s+2·other)).
	s, y, n := shares, *same, *other
	disc := (s-n)*(s-n) + y*(y+2*s+2*n)
	r := 2 * s * n / (y + s + n + math.Sqrt(disc))
	*same = y + s - r
	*other = n - r
	return r, after
}

// Buy spends amount on one side and returns the shares bought.
func (p *Pool) Buy(yes bool, amount float64) float64 {
	shares, after := p.QuoteBuy(yes, amount)
	*p = after
	return shares
}

// Sell sells shares of one side and returns the proceeds.
func (p *Pool) Sell(yes bool, shares float64) float64 {
	proceeds, after := p.QuoteSell(yes, shares)
	*p = after
	return proceeds
}

// slugMax is the longest slug made from a question; collisionMax the longest
// id once a collision suffix is added.
const (
	slugMax      = 40
	collisionMax = 45
)

// Slug makes a market id from a question, as the reference does: lowercase
// it, replace each run of characters outside [a-z0-9] with "_", strip
// leading and trailing "_", and cut to 40 characters.
func Slug(question string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(question) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	s := strings.Trim(b.String(), "_")
	if len(s) > slugMax {
		s = s[:slugMax]
	}
	return s
}

// UniqueSlug returns Slug(question), or on a collision with taken
// base[:45−len("_n")] + "_n" for the first free n = 2, 3, …
func UniqueSlug(question string, taken func(string) bool) string {
	base := Slug(question)
	if !taken(base) {
		return base
	}
	for n := 2; ; n++ {
		suffix := "_" + strconv.Itoa(n)
		id := base[:min(len(base), collisionMax-len(suffix))] + suffix
		if !taken(id) {
			return id
		}
	}
}

// Floor2 floors a number of shares to two decimal places for display, so
// that the displayed holding never exceeds the real one and can always be
// sold: 1.994 shows as 1.99, and 0.29 (stored as 0.28999…) still shows as
// 0.29. Money is rounded to cents instead (round2).
func Floor2(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return math.Max(0, x)
	}
	m := math.Floor(x * 100)
	if up := (m + 1) / 100; up <= x {
		return up
	}
	for m > 0 && m/100 > x {
		m--
	}
	return m / 100
}
