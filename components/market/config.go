package market

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Config is the market component's scenario config (see docs/components.md).
// Zero fields take the reference's defaults.
type Config struct {
	// Markets are the questions traded, in order; each gets an id slugged
	// from its question.
	Markets []MarketSpec `json:"markets"`
	// AMM is the market maker: "fair" (complete sets; the default) or
	// "seed" (the reference's rule, under which a share costs more than its
	// price). See AMM.
	AMM AMM `json:"amm"`
	// InitialBalance is every agent's starting cash [1000].
	InitialBalance *float64 `json:"initial_balance"`
	// InitialLiquidity is each market's liquidity L unless it sets its own [500].
	InitialLiquidity float64 `json:"initial_liquidity"`
	// PriceMoveThreshold: a market whose YES price moves at least this much
	// over a round publishes price_move [0.1].
	PriceMoveThreshold float64 `json:"price_move_event_threshold"`
	// RoundTicks is the length of a round in ticks [1]: price moves are
	// measured and the round counter advances once per round.
	RoundTicks int `json:"round_ticks"`
	// CommentsShown is how many of each market's newest comments an
	// observation shows [5]; CommentsKept how many are kept [50].
	CommentsShown int `json:"comments_shown"`
	CommentsKept  int `json:"comments_kept"`
	// MaxCommentLength is the longest comment in characters [500].
	MaxCommentLength int `json:"max_comment_length"`
}

// MarketSpec is one market of the config.
type MarketSpec struct {
	Question string `json:"question"`
	// InitialPriceYes is the YES price the reserves are seeded at, strictly
	// between 0 and 1 [0.5].
	InitialPriceYes *float64 `json:"initial_price_yes"`
	// Liquidity is this market's L [the config's initial_liquidity].
	Liquidity float64 `json:"liquidity"`
	// ResolveTick, with Outcome, resolves the market at the end of that tick:
	// each winning share pays 1 and trading closes. A scheduled event
	// {"type": "resolve_market", "data": {"market_id": …, "outcome": …}}
	// resolves a market too.
	ResolveTick *int   `json:"resolve_tick"`
	Outcome     string `json:"outcome"`
}

// Limits on what a config may ask for.
const (
	maxMarkets     = 100
	maxQuestionLen = 300
	maxMoney       = 1e12
	maxKept        = 1000
)

// Defaults (the reference's MarketConfig).
const (
	DefaultInitialBalance   = 1000.0
	DefaultInitialLiquidity = 500.0
	DefaultPriceMove        = 0.1
	defaultCommentsShown    = 5
	defaultCommentsKept     = 50
	defaultCommentLen       = 500
)

// ParseConfig decodes and validates a config; unknown fields are errors, and
// every error names its field.
func ParseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) && typ.Field != "" {
				return c, fmt.Errorf("config.%s: must be %s, got JSON %s", typ.Field, typ.Type.Kind(), typ.Value)
			}
			return c, fmt.Errorf("config: %v", strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	return c, c.normalize()
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// normalize fills in defaults and checks the config.
func (c *Config) normalize() error {
	switch c.AMM {
	case "":
		c.AMM = AMMFair
	case AMMFair, AMMSeed:
	default:
		return fmt.Errorf("config.amm: must be %q (complete sets, the default) or %q (the reference's maker), got %q", AMMFair, AMMSeed, c.AMM)
	}
	if c.InitialBalance == nil {
		c.InitialBalance = ptr(DefaultInitialBalance)
	}
	if b := *c.InitialBalance; !finite(b) || b < 0 || b > maxMoney {
		return fmt.Errorf("config.initial_balance: must be between 0 and %g, got %g", maxMoney, b)
	}
	if c.InitialLiquidity == 0 {
		c.InitialLiquidity = DefaultInitialLiquidity
	}
	if l := c.InitialLiquidity; !finite(l) || l <= 0 || l > maxMoney {
		return fmt.Errorf("config.initial_liquidity: must be greater than 0 and at most %g, got %g", maxMoney, l)
	}
	if c.PriceMoveThreshold == 0 {
		c.PriceMoveThreshold = DefaultPriceMove
	}
	if t := c.PriceMoveThreshold; !finite(t) || t <= 0 || t > 1 {
		return fmt.Errorf("config.price_move_event_threshold: must be greater than 0 and at most 1, got %g", t)
	}
	if c.RoundTicks == 0 {
		c.RoundTicks = 1
	}
	if c.RoundTicks < 1 || c.RoundTicks > 1_000_000 {
		return fmt.Errorf("config.round_ticks: must be between 1 and 1000000, got %d", c.RoundTicks)
	}
	if c.CommentsShown == 0 {
		c.CommentsShown = defaultCommentsShown
	}
	if c.CommentsKept == 0 {
		c.CommentsKept = defaultCommentsKept
	}
	if c.CommentsShown < 0 || c.CommentsKept < c.CommentsShown || c.CommentsKept > maxKept {
		return fmt.Errorf("config: comments_shown (%d) must be at least 0 and at most comments_kept (%d), which is at most %d", c.CommentsShown, c.CommentsKept, maxKept)
	}
	if c.MaxCommentLength == 0 {
		c.MaxCommentLength = defaultCommentLen
	}
	if c.MaxCommentLength < 1 || c.MaxCommentLength > 10_000 {
		return fmt.Errorf("config.max_comment_length: must be between 1 and 10000, got %d", c.MaxCommentLength)
	}
	if len(c.Markets) == 0 {
		return fmt.Errorf("config.markets: at least one market is required, e.g. [{\"question\": \"Will it rain on Friday?\", \"initial_price_yes\": 0.5}]")
	}
	if len(c.Markets) > maxMarkets {
		return fmt.Errorf("config.markets: at most %d markets, got %d", maxMarkets, len(c.Markets))
	}
	for i := range c.Markets {
		m := &c.Markets[i]
		f := fmt.Sprintf("config.markets[%d]", i)
		m.Question = strings.TrimSpace(m.Question)
		switch {
		case m.Question == "":
			return fmt.Errorf("%s.question: is required", f)
		case len([]rune(m.Question)) > maxQuestionLen:
			return fmt.Errorf("%s.question: must be at most %d characters", f, maxQuestionLen)
		case Slug(m.Question) == "":
			return fmt.Errorf("%s.question: %q has no letters or digits to make a market id from", f, m.Question)
		}
		if m.InitialPriceYes == nil {
			m.InitialPriceYes = ptr(0.5)
		}
		if p := *m.InitialPriceYes; !finite(p) || p <= 0 || p >= 1 {
			return fmt.Errorf("%s.initial_price_yes: must be strictly between 0 and 1, got %g", f, p)
		}
		if m.Liquidity == 0 {
			m.Liquidity = c.InitialLiquidity
		}
		if l := m.Liquidity; !finite(l) || l <= 0 || l > maxMoney {
			return fmt.Errorf("%s.liquidity: must be greater than 0 and at most %g, got %g", f, maxMoney, l)
		}
		m.Outcome = strings.ToLower(strings.TrimSpace(m.Outcome))
		switch {
		case m.ResolveTick == nil && m.Outcome != "":
			return fmt.Errorf("%s.outcome: needs resolve_tick, the tick at whose end the market resolves", f)
		case m.ResolveTick != nil && *m.ResolveTick < 0:
			return fmt.Errorf("%s.resolve_tick: must not be negative, got %d", f, *m.ResolveTick)
		case m.ResolveTick != nil && m.Outcome != "yes" && m.Outcome != "no":
			return fmt.Errorf("%s.outcome: must be \"yes\" or \"no\" when resolve_tick is set, got %q", f, m.Outcome)
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
