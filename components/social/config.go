package social

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Config is the social component's scenario config; every field is optional.
type Config struct {
	// RoundTicks is the length of a round in ticks: feeds are ranked, beliefs
	// updated and viral posts announced once per round. Default 1.
	RoundTicks int `json:"round_ticks"`
	// Threading shows replies under their posts. Default true.
	Threading bool `json:"threading"`
	// The feed ranking: score = recency_weight·recency +
	// popularity_weight·ln(1 + likes + reposts) + relevance_weight·relevance,
	// where relevance is 1 for a followed author and 1 − echo_chamber_strength
	// otherwise. Defaults 0.3, 0.4, 0.3 and 0.5.
	RecencyWeight       float64 `json:"recency_weight"`
	PopularityWeight    float64 `json:"popularity_weight"`
	RelevanceWeight     float64 `json:"relevance_weight"`
	EchoChamberStrength float64 `json:"echo_chamber_strength"`
	// FeedSize is how many top-level posts a feed shows. Default 20.
	FeedSize int `json:"feed_size"`
	// RepliesShown is how many direct replies are shown under each post (the
	// first ones). Default 3.
	RepliesShown int `json:"replies_shown"`
	// ViralThreshold: a post whose likes + reposts reach it is announced once
	// as viral_post. Default 5.
	ViralThreshold int `json:"viral_threshold"`
	// MaxPostLength is the longest post or reply, in characters. Default 280.
	MaxPostLength int `json:"max_post_length"`
	// Beliefs switches the belief model on. Default true.
	Beliefs bool `json:"beliefs"`
	// Topics are the belief topics. A post counts for a topic when the topic
	// has no keywords or the post contains one of them (case-insensitive).
	// Default: one topic, named after the objective's description (cut to 200
	// characters), or "topic".
	Topics []Topic `json:"topics"`
	// InitialPositionSpread, when positive, starts each agent's position on
	// each topic at a seeded random point of [-spread, spread] instead of 0.
	InitialPositionSpread float64 `json:"initial_position_spread"`
}

// Topic is one belief topic.
type Topic struct {
	Name     string   `json:"name"`
	Keywords []string `json:"keywords"`
}

// Limits on the config.
const (
	maxRoundTicks  = 100000
	maxFeedSize    = 100
	maxReplies     = 10
	maxPostLength  = 10000
	maxTopics      = 8
	maxTopicLength = 200
	maxViral       = 1000000
)

// DefaultConfig is the reference's configuration.
func DefaultConfig() Config {
	return Config{
		RoundTicks: 1, Threading: true,
		RecencyWeight: 0.3, PopularityWeight: 0.4, RelevanceWeight: 0.3, EchoChamberStrength: 0.5,
		FeedSize: 20, RepliesShown: 3, ViralThreshold: 5, MaxPostLength: 280, Beliefs: true,
	}
}

// ParseConfig reads a config over the defaults; unknown fields and values out
// of range are errors naming the field.
func ParseConfig(raw json.RawMessage) (Config, error) {
	cfg := DefaultConfig()
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			var typ *json.UnmarshalTypeError
			switch {
			case errors.As(err, &typ) && typ.Field != "":
				return Config{}, fmt.Errorf("config.%s: must be %s, got JSON %s", typ.Field, kindName(typ.Type.Kind().String()), typ.Value)
			case strings.HasPrefix(err.Error(), "json: unknown field "):
				return Config{}, fmt.Errorf("config: unknown field %s (known: round_ticks, threading, recency_weight, popularity_weight, relevance_weight, echo_chamber_strength, feed_size, replies_shown, viral_threshold, max_post_length, beliefs, topics, initial_position_spread)",
					strings.TrimPrefix(err.Error(), "json: unknown field "))
			}
			return Config{}, fmt.Errorf("config: %v", err)
		}
	}
	return cfg, cfg.validate()
}

func (c Config) validate() error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if c.RoundTicks < 1 || c.RoundTicks > maxRoundTicks {
		add("config.round_ticks: must be from 1 to %d, got %d", maxRoundTicks, c.RoundTicks)
	}
	for _, w := range []struct {
		name string
		v    float64
		max  float64
	}{{"recency_weight", c.RecencyWeight, 100}, {"popularity_weight", c.PopularityWeight, 100}, {"relevance_weight", c.RelevanceWeight, 100},
		{"echo_chamber_strength", c.EchoChamberStrength, 1}, {"initial_position_spread", c.InitialPositionSpread, 1}} {
		if math.IsNaN(w.v) || w.v < 0 || w.v > w.max {
			add("config.%s: must be from 0 to %g, got %g", w.name, w.max, w.v)
		}
	}
	if c.FeedSize < 1 || c.FeedSize > maxFeedSize {
		add("config.feed_size: must be from 1 to %d, got %d", maxFeedSize, c.FeedSize)
	}
	if c.RepliesShown < 0 || c.RepliesShown > maxReplies {
		add("config.replies_shown: must be from 0 to %d, got %d", maxReplies, c.RepliesShown)
	}
	if c.ViralThreshold < 1 || c.ViralThreshold > maxViral {
		add("config.viral_threshold: must be from 1 to %d, got %d", maxViral, c.ViralThreshold)
	}
	if c.MaxPostLength < 1 || c.MaxPostLength > maxPostLength {
		add("config.max_post_length: must be from 1 to %d, got %d", maxPostLength, c.MaxPostLength)
	}
	if len(c.Topics) > maxTopics {
		add("config.topics: at most %d topics, got %d", maxTopics, len(c.Topics))
	}
	names := map[string]bool{}
	for i, t := range c.Topics {
		n := strings.TrimSpace(t.Name)
		switch {
		case n == "":
			add("config.topics[%d].name: is required", i)
		case len([]rune(n)) > maxTopicLength:
			add("config.topics[%d].name: at most %d characters", i, maxTopicLength)
		case names[n]:
			add("config.topics[%d].name: %q is already a topic", i, n)
		}
		names[n] = true
		for j, k := range t.Keywords {
			if strings.TrimSpace(k) == "" {
				add("config.topics[%d].keywords[%d]: must not be empty", i, j)
			}
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// kindName names a Go kind the way a scenario author thinks of it.
func kindName(kind string) string {
	switch kind {
	case "int", "int64":
		return "a whole number"
	case "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "string":
		return "text"
	case "slice":
		return "a list"
	case "struct":
		return "an object"
	}
	return kind
}
