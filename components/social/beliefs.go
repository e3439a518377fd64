package social

import (
	"fmt"
	"maps"
	"math"
)

// The belief model (the reference's, constants included). Each agent holds, per
// topic, a position in [-1, 1] (opposed … supportive), a confidence in [0, 1]
// and a trust in [0, 1] for each author it has read. Once per round every agent
// is moved by the posts it saw, weighted by how much it trusts their authors,
// how popular and how new they are, and resisted by its own confidence.
const (
	// ExposureCap is how many post keys an agent remembers for novelty.
	ExposureCap = 2000
	// DefaultTrust is the trust in an author not read before.
	DefaultTrust = 0.5
	// DefaultConfidence and DefaultPosition are where every agent starts.
	DefaultConfidence = 0.5
	DefaultPosition   = 0.0
	// NoveltyNew weighs a post the agent has not seen before, NoveltyRepeat one
	// it has.
	NoveltyNew    = 1.5
	NoveltyRepeat = 0.5
	// Social proof is SocialProofBase + SocialProofPerLike × likes.
	SocialProofBase    = 0.3
	SocialProofPerLike = 0.07
	// ConfidencePerLike and ConfidencePerDislike move confidence for each like
	// and dislike the agent's own posts received during the round.
	ConfidencePerLike    = 0.005
	ConfidencePerDislike = 0.008
	// TrustRate is the trust learning rate.
	TrustRate = 0.05
	// ResistanceBase + ResistancePerConfidence × confidence is how hard an
	// agent is to move.
	ResistanceBase          = 0.3
	ResistancePerConfidence = 0.7
	// StepScale scales each post's pull.
	StepScale = 0.1
)

// Belief is one agent's belief on one topic.
type Belief struct {
	Position   float64
	Confidence float64
	// Trust maps author ids to trust; an author not in it has DefaultTrust.
	Trust map[string]float64
}

// NewBelief is the starting belief: position 0, confidence 0.5, no trust yet.
func NewBelief() Belief {
	return Belief{Position: DefaultPosition, Confidence: DefaultConfidence}
}

// TrustIn returns the trust in an author.
func (b Belief) TrustIn(author string) float64 {
	if t, ok := b.Trust[author]; ok {
		return t
	}
	return DefaultTrust
}

// Exposure is one post an agent saw during a round.
type Exposure struct {
	Author string
	Stance float64 // sentiment of the text, in [-1, 1]
	Likes  int     // the post's likes when the round ends
	Novel  bool    // not seen before
}

// Update applies one round to a belief: the posts seen, and the likes and
// dislikes the agent's own posts received. It returns the new belief and never
// changes b (its trust map is copied). The steps, as in the reference:
//
//  1. resistance = 0.3 + 0.7·confidence
//  2. for each post, influence = trust(author)·(0.3 + 0.07·likes)·novelty / resistance
//     and Δ += (stance − position)·influence·0.1
//  3. position = clamp(position + Δ, −1, 1)
//  4. for each post, in order, trust(author) += (1 − |stance − position|/2 − 0.5)·0.05,
//     clamped to [0, 1]
//  5. confidence = clamp(confidence + 0.005·likes − 0.008·dislikes, 0, 1)
func Update(b Belief, seen []Exposure, ownLikes, ownDislikes int) Belief {
	out := Belief{Position: b.Position, Confidence: b.Confidence, Trust: maps.Clone(b.Trust)}
	if len(seen) > 0 && out.Trust == nil {
		out.Trust = make(map[string]float64, len(seen))
	}
	resistance := ResistanceBase + ResistancePerConfidence*b.Confidence
	delta := 0.0
	for _, e := range seen {
		novelty := NoveltyRepeat
		if e.Novel {
			novelty = NoveltyNew
		}
		influence := b.TrustIn(e.Author) * (SocialProofBase + SocialProofPerLike*float64(e.Likes)) * novelty / resistance
		delta += (e.Stance - b.Position) * influence * StepScale
	}
	out.Position = clamp(b.Position+delta, -1, 1)
	for _, e := range seen {
		alignment := 1 - math.Abs(e.Stance-out.Position)/2
		out.Trust[e.Author] = clamp(out.TrustIn(e.Author)+(alignment-0.5)*TrustRate, 0, 1)
	}
	out.Confidence = clamp(b.Confidence+ConfidencePerLike*float64(ownLikes)-ConfidencePerDislike*float64(ownDislikes), 0, 1)
	return out
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// PositionBand renders a position for language models.
func PositionBand(p float64) string {
	switch {
	case p >= 0.6:
		return "strongly supportive"
	case p >= 0.2:
		return "leaning supportive"
	case p > -0.2:
		return "undecided"
	case p > -0.6:
		return "leaning opposed"
	}
	return "strongly opposed"
}

// ConfidenceBand renders a confidence for language models.
func ConfidenceBand(c float64) string {
	switch {
	case c >= 0.75:
		return "firmly held"
	case c >= 0.45:
		return "moderate"
	case c >= 0.2:
		return "tentative"
	}
	return "uncertain"
}

// BeliefLine is the reference's line for one topic.
func BeliefLine(topic string, b Belief) string {
	return fmt.Sprintf("On %s: you are %s (confidence: %s)", topic, PositionBand(b.Position), ConfidenceBand(b.Confidence))
}
