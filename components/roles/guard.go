package roles

import (
	"slices"

	"github.com/arena-sim/arena/world"
)

// GuardTool implements world.ToolGuard: the game's channels govern every way
// of talking, the world's send_message included. A message is allowed only
// when a speak at the same moment would be, and reaches only who that speak
// would reach (the dead only the dead, and the Medium at night; night chat
// stays within the Mafia); a message to one player must stay within that
// audience too, so by day private words are whispers, which everyone sees.
// Once the game is over nothing is hidden and nothing is guarded.
func (g *Game) GuardTool(_ *world.World, c world.GuardedCall) world.Verdict {
	if c.Tool != "send_message" || g.phase == PhaseOver {
		return world.Verdict{}
	}
	i, ok := g.idx[c.Agent]
	if !ok {
		return world.Verdict{}
	}
	p := g.players[i]
	channel, seats, refusal := g.speakAudience(p)
	if refusal != "" {
		return world.Refuse(world.CodeNotAllowed, "send_message follows the role game's rules for speaking: %s", refusal)
	}
	if channel == "jail" || channel == "seance" {
		// Their speakers are anonymous (the Jailor) or their pairing secret:
		// a world message would name its sender.
		return world.Refuse(world.CodeNotAllowed, "The %s channel is spoken with speak only (send_message names its sender)", channel)
	}
	target, _ := c.Params["target_agent"].(string)
	if seats == nil {
		if target == "" || target == "all" {
			return world.Verdict{}
		}
		return world.Refuse(world.CodeNotAllowed, "In the role game, words for one player by day are a whisper: use whisper (everyone sees that you whispered)")
	}
	audience := make([]string, 0, len(seats))
	for _, s := range seats {
		if s != i {
			audience = append(audience, g.players[s].id)
		}
	}
	if target != "" && target != "all" && target != "team" && !slices.Contains(audience, target) {
		return world.Refuse(world.CodeNotAllowed, "%s cannot reach %s now: the %s channel is all you may use", p.id, target, channel)
	}
	return world.Verdict{Audience: audience}
}
