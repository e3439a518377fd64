package market

import (
	"math"
	"strconv"
	"strings"
)

// Pool is a constant-product automated market maker for one yes/no question,
// the reference's (SimSwarm's) AMM: Yes is the YES reserve y, No the NO
// reserve n, and K = y·n stays constant across trades (it is fixed when the
// pool is seeded; every trade recomputes one reserve as K divided by the
// other). There are no fees.
//
//	price_yes = n/(y+n)            price_no = y/(y+n)
//	seed(p, L):  y = 2L(1−p), n = 2Lp
//	buy YES a:   n' = n+a, y' = K/n', shares = y−y'
//	buy NO a:    y' = y+a, n' = K/y', shares = n−n'
//	sell YES s:  y' = y+s, n' = K/y', proceeds = n−n'
//	sell NO s:   n' = n+s, y' = K/n', proceeds = y−y'
type Pool struct {
	Yes, No, K float64
}

// Seed returns the pool for an initial YES price p (0 < p < 1) and a
// liquidity L: reserves y = 2L(1−p) and n = 2Lp, so that price_yes = p.
func Seed(p, liquidity float64) Pool {
	y, n := 2*liquidity*(1-p), 2*liquidity*p
	return Pool{Yes: y, No: n, K: y * n}
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

// QuoteBuy returns the shares that amount buys and the reserves after the
// trade, without trading.
func (p *Pool) QuoteBuy(yes bool, amount float64) (shares float64, after Pool) {
	after = *p
	if yes {
		after.No = p.No + amount
		after.Yes = p.K / after.No
		return p.Yes - after.Yes, after
	}
	after.Yes = p.Yes + amount
	after.No = p.K / after.Yes
	return p.No - after.No, after
}

// QuoteSell returns the proceeds of selling shares and the reserves after the
// trade, without trading.
func (p *Pool) QuoteSell(yes bool, shares float64) (proceeds float64, after Pool) {
	after = *p
	if yes {
		after.Yes = p.Yes + shares
		after.No = p.K / after.Yes
		return p.No - after.No, after
	}
	after.No = p.No + shares
	after.Yes = p.K / after.No
	return p.Yes - after.Yes, after
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

// Floor2 floors an amount to two decimal places for display, so that the
// displayed amount never exceeds the real one and can always be sold: 1.994
// shows as 1.99, and 0.29 (stored as 0.28999…) still shows as 0.29.
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
