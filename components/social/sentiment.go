package social

import (
	"math"
	"strings"
	"unicode"
)

// Stance is scored by a small lexicon scorer that follows VADER's rules
// (Hutto & Gilbert, 2014) with a lexicon of its own. The reference uses the
// Python vaderSentiment package; the one Go port on the module proxy
// (github.com/jonreiter/govader) has no tagged release and pulls in an old
// gonum, so the fallback applies: a documented lexicon scorer.
//
// The rules, as in VADER:
//   - each word found in the lexicon has a valence in [-4, 4];
//   - a word in capitals, in a text that is not all capitals, is emphasised
//     (±0.733);
//   - a booster ("very", "slightly", ...) up to three words before it adds
//     ±0.293 in the word's direction (×1, ×0.95, ×0.9 by distance);
//   - a negation ("not", "never", "...n't", ...) up to three words before it
//     multiplies the valence by -0.74;
//   - after "but" valences count 1.5×, before it 0.5×;
//   - each "!" (at most 4) adds 0.292, and two or more "?" add 0.18 each
//     (0.96 for more than three), in the direction of the sum;
//   - the sum s becomes the compound score s/√(s²+15), clamped to [-1, 1].
//
// Empty text, or text with no lexicon word, scores 0.

const (
	boostIncr   = 0.293
	boostDecr   = -0.293
	capsIncr    = 0.733
	negScalar   = -0.74
	vaderAlpha  = 15.0
	exclamIncr  = 0.292
	questIncr   = 0.18
	questMax    = 0.96
	maxExclaims = 4
)

// lexicon holds valences on VADER's scale, -4 (most negative) to 4.
var lexicon = map[string]float64{
	// positive
	"good": 1.9, "great": 3.1, "excellent": 2.7, "amazing": 2.8, "awesome": 3.1, "wonderful": 2.7,
	"fantastic": 2.6, "brilliant": 2.8, "love": 3.2, "loved": 2.9, "loves": 2.7,
	"nice": 1.8, "happy": 2.7, "glad": 2.0, "hope": 1.9, "hopeful": 1.7, "best": 3.2, "better": 1.9,
	"support": 1.7, "supports": 1.5, "supported": 1.3, "supportive": 1.9, "agree": 1.5, "agreed": 1.1,
	"benefit": 1.5, "benefits": 1.5, "beneficial": 1.9, "helpful": 1.8, "help": 1.7, "helps": 1.6,
	"win": 2.8, "wins": 2.7, "success": 2.7, "successful": 2.8, "progress": 1.8, "improve": 1.9,
	"improves": 1.8, "improvement": 2.0, "safe": 1.9, "safer": 1.8, "fair": 1.3, "smart": 1.7,
	"wise": 1.8, "worth": 0.9, "worthwhile": 1.6, "positive": 2.3, "yes": 1.7, "thanks": 1.9,
	"thank": 1.5, "welcome": 2.0, "exciting": 2.2, "excited": 1.4, "proud": 2.1, "strong": 2.3,
	"thrive": 2.0, "healthy": 1.7, "clean": 1.7, "valuable": 2.1, "useful": 1.9, "right": 0.9,
	"trust": 2.3, "favor": 1.7, "favour": 1.7, "backing": 0.9, "boost": 1.5, "yay": 2.4,
	"enjoy": 2.2, "fun": 2.3, "perfect": 2.7, "solid": 1.1, "vital": 1.2, "promising": 1.8,
	"brave": 2.4, "kind": 2.4, "generous": 2.3, "sensible": 1.4,
	// negative
	"bad": -2.5, "terrible": -2.9, "awful": -2.9, "horrible": -2.5, "hate": -2.7, "hates": -2.7,
	"hated": -3.2, "worse": -2.1, "worst": -3.1, "wrong": -2.1, "poor": -2.1, "sad": -2.1,
	"angry": -2.3, "oppose": -1.5, "opposes": -1.4, "opposed": -1.3, "against": -1.2,
	"disagree": -1.6, "harm": -2.2, "harms": -2.2, "harmful": -2.4, "waste": -1.8, "wasteful": -1.9,
	"risk": -1.1, "risks": -1.1, "risky": -1.4, "danger": -2.4, "dangerous": -2.1, "fail": -2.3,
	"fails": -2.0, "failed": -2.3, "failure": -2.3, "no": -1.2, "problem": -1.7, "problems": -1.7,
	"costly": -1.0, "expensive": -0.8, "corrupt": -2.4, "lie": -1.6, "lies": -1.8, "scam": -2.5,
	"stupid": -2.4, "useless": -1.8, "boring": -1.3, "fear": -2.2, "afraid": -2.0, "worry": -1.6,
	"worried": -1.2, "concern": -0.6, "concerned": -0.9, "mistake": -1.4, "disaster": -3.1,
	"unfair": -2.1, "ugly": -2.3, "hurt": -2.4, "hurts": -2.1, "loss": -1.3, "lose": -1.7,
	"losing": -1.6, "damage": -2.2, "threat": -2.4, "crisis": -3.1, "reject": -1.7, "nonsense": -1.7,
	"ridiculous": -1.5, "doubt": -1.5, "doubts": -1.4, "doubtful": -1.4, "weak": -1.9, "broken": -2.1, "pointless": -1.8,
	"burden": -1.9, "unsafe": -2.2, "dirty": -1.9, "noisy": -0.7, "shame": -2.1, "disappointing": -2.2,
}

// boosters are intensifiers (positive) and dampeners (negative).
var boosters = map[string]float64{
	"absolutely": boostIncr, "completely": boostIncr, "deeply": boostIncr, "entirely": boostIncr,
	"extremely": boostIncr, "highly": boostIncr, "hugely": boostIncr, "incredibly": boostIncr,
	"most": boostIncr, "more": boostIncr, "really": boostIncr, "so": boostIncr, "strongly": boostIncr,
	"totally": boostIncr, "truly": boostIncr, "utterly": boostIncr, "very": boostIncr, "especially": boostIncr,
	"barely": boostDecr, "hardly": boostDecr, "less": boostDecr, "marginally": boostDecr,
	"partly": boostDecr, "slightly": boostDecr, "somewhat": boostDecr, "little": boostDecr,
}

// negations reverse the valence of what follows them; words ending in n't
// are negations too.
var negations = map[string]bool{
	"not": true, "no": true, "never": true, "none": true, "nobody": true, "nothing": true,
	"neither": true, "nor": true, "cannot": true, "without": true, "dont": true, "doesnt": true,
	"didnt": true, "isnt": true, "arent": true, "wasnt": true, "werent": true, "wont": true,
	"cant": true, "couldnt": true, "shouldnt": true, "wouldnt": true, "aint": true, "hardly": true,
}

func isNegation(w string) bool {
	return negations[w] || strings.HasSuffix(w, "n't") || strings.HasSuffix(w, "n’t")
}

// Sentiment returns text's compound sentiment in [-1, 1]: VADER's rules over
// this package's lexicon (see the comment above). Empty text scores 0.
func Sentiment(text string) float64 {
	raw := strings.Fields(text)
	if len(raw) == 0 {
		return 0
	}
	words := make([]string, 0, len(raw)) // lower case, punctuation trimmed
	shouts := make([]bool, 0, len(raw))  // written in capitals
	anyCaps, anyLower := false, false
	for _, r := range raw {
		w := strings.TrimFunc(r, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '\'' && c != '’' })
		w = strings.Trim(w, "'’")
		if w == "" {
			continue
		}
		caps := isCaps(w)
		if caps {
			anyCaps = true
		} else {
			anyLower = true
		}
		words = append(words, strings.ToLower(w))
		shouts = append(shouts, caps)
	}
	capDiff := anyCaps && anyLower
	vals := make([]float64, len(words))
	for i, w := range words {
		v, ok := lexicon[w]
		if !ok {
			continue
		}
		if w == "kind" && i+1 < len(words) && words[i+1] == "of" {
			continue // "kind of" is a dampener, not kindness
		}
		if w == "no" && i+1 < len(words) {
			if _, next := lexicon[words[i+1]]; next {
				continue // "no problem": the negation, not the valence
			}
		}
		if shouts[i] && capDiff {
			v += math.Copysign(capsIncr, v)
		}
		for j := 1; j <= 3 && i-j >= 0; j++ {
			b, ok := boosters[words[i-j]]
			if !ok {
				continue
			}
			if _, inLex := lexicon[words[i-j]]; inLex {
				continue
			}
			s := b
			if v < 0 {
				s = -s
			}
			if shouts[i-j] && capDiff {
				s += math.Copysign(capsIncr, s)
			}
			switch j {
			case 2:
				s *= 0.95
			case 3:
				s *= 0.9
			}
			v += s
		}
		for j := 1; j <= 3 && i-j >= 0; j++ {
			if isNegation(words[i-j]) {
				v *= negScalar
				break
			}
		}
		vals[i] = v
	}
	for i, w := range words {
		if w != "but" {
			continue
		}
		for k := range vals {
			switch {
			case k < i:
				vals[k] *= 0.5
			case k > i:
				vals[k] *= 1.5
			}
		}
		break
	}
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	if sum == 0 {
		return 0
	}
	amp := float64(min(strings.Count(text, "!"), maxExclaims)) * exclamIncr
	if q := strings.Count(text, "?"); q > 1 {
		if q <= 3 {
			amp += float64(q) * questIncr
		} else {
			amp += questMax
		}
	}
	sum += math.Copysign(amp, sum)
	c := sum / math.Sqrt(sum*sum+vaderAlpha)
	return math.Max(-1, math.Min(1, c))
}

// isCaps reports whether a word is written in capitals (two letters or more).
func isCaps(w string) bool {
	letters := 0
	for _, c := range w {
		if unicode.IsLetter(c) {
			if !unicode.IsUpper(c) {
				return false
			}
			letters++
		}
	}
	return letters >= 2
}
