package roles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Config is the role game's scenario config. Every field is optional.
type Config struct {
	// Phase lengths in world ticks.
	DiscussionTicks int `json:"discussion_ticks"`
	NominationTicks int `json:"nomination_ticks"`
	DefenseTicks    int `json:"defense_ticks"`
	JudgementTicks  int `json:"judgement_ticks"`
	LastWordsTicks  int `json:"last_words_ticks"`
	NightTicks      int `json:"night_ticks"`
	// MaxTrials is the most trials a day [3].
	MaxTrials int `json:"max_trials"`
	// MaxDays ends the game as a draw after this many days [30].
	MaxDays int `json:"max_days"`
	// MayorVotes is a revealed Mayor's vote weight [3].
	MayorVotes int `json:"mayor_votes"`
	// Investigator is the investigator result table: "classic" (the only
	// one; the coven table was removed with the coven roles it named).
	Investigator string `json:"investigator"`
	// SetupList is the role list roles are drawn from: "default" (7 to 15
	// players), or the classic 15-player lists "classic", "ranked_practice"
	// and "all_any" [default].
	SetupList string `json:"setup_list"`
	// Setup gives the roles in agent order instead of drawing them.
	Setup []string `json:"setup,omitempty"`
	// MaxWillLength bounds wills and forgeries, in characters [500].
	MaxWillLength int `json:"max_will_length"`
	// MaxSpeechLength bounds speak and whisper texts [300].
	MaxSpeechLength int `json:"max_speech_length"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{DiscussionTicks: 2, NominationTicks: 2, DefenseTicks: 1, JudgementTicks: 1, LastWordsTicks: 1,
		NightTicks: 2, MaxTrials: 3, MaxDays: 30, MayorVotes: 3, Investigator: "classic", SetupList: "default",
		MaxWillLength: 500, MaxSpeechLength: 300}
}

// ParseConfig reads a config over the defaults; unknown fields are errors.
func ParseConfig(raw json.RawMessage) (Config, error) {
	cfg := DefaultConfig()
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return cfg, fmt.Errorf("config: %w", err)
		}
	}
	return cfg, cfg.validate()
}

func (c Config) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"discussion_ticks", c.DiscussionTicks}, {"nomination_ticks", c.NominationTicks}, {"defense_ticks", c.DefenseTicks},
		{"judgement_ticks", c.JudgementTicks}, {"last_words_ticks", c.LastWordsTicks}, {"night_ticks", c.NightTicks},
		{"max_trials", c.MaxTrials}, {"max_days", c.MaxDays}, {"mayor_votes", c.MayorVotes},
		{"max_will_length", c.MaxWillLength}, {"max_speech_length", c.MaxSpeechLength}} {
		if f.v < 1 || f.v > 10000 {
			return fmt.Errorf("config: %s must be from 1 to 10000, got %d", f.name, f.v)
		}
	}
	switch c.Investigator {
	case "classic":
	case "coven":
		return fmt.Errorf("config: investigator \"coven\" was removed: the game has no coven roles, so its groups would name roles that cannot be dealt; use \"classic\"")
	default:
		return fmt.Errorf("config: investigator must be \"classic\", got %q", c.Investigator)
	}
	if _, ok := setupLists[c.SetupList]; !ok {
		return fmt.Errorf("config: setup_list must be one of %s, got %q", strings.Join(SetupLists(), ", "), c.SetupList)
	}
	for i, r := range c.Setup {
		if _, ok := cardByName[r]; !ok {
			return fmt.Errorf("config: setup[%d]: unknown role %q (known: %v)", i, r, cardNames)
		}
	}
	return nil
}
