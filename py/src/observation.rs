//! Games read back from observations, for agents asked to act on a batch of them
//! (`Agent.act_batch`): the inverse of `morris_env::features::encode`, up to the history.
//!
//! An observation holds the pieces, the hands, a pending removal and the counters the draw rules
//! read (docs/environment.md, layout version 1), so the position it shows can be rebuilt, but
//! not the earlier positions of its game: the rebuilt game starts its history there. Its
//! repetition count is therefore 1 even where plane 13 says the position occurred before.

use morris_env::features::encode;
use morris_env::{BitBoard, Color, Game, NUM_PLANES, NUM_POINTS, OBS_LEN, Position, Rules};

/// The plane of the repetition count, which a game without its history cannot reproduce.
const REPETITION_PLANE: usize = 13;

/// The game whose current position `obs` (`[15 * 24]`, layout version 1) shows under `rules`,
/// with an empty history. The colour is not encoded and the rules treat both alike, so the
/// mover is the colour the hands allow (White when both hands are empty).
///
/// # Errors
/// A reason, to follow "observation i ...", when `obs` is not what `encode` writes for any
/// position under `rules`: entries other than 0/1 on the board planes, a plane that should be
/// constant and is not, counts off the grid of their plane, pieces and hands no game reaches,
/// or counters the rules do not have (observations made under other rules).
pub(crate) fn game_from_observation(obs: &[f32], rules: &Rules) -> Result<Game, String> {
    if obs.len() != OBS_LEN {
        return Err(format!("has {} entries, not {OBS_LEN}", obs.len()));
    }
    let plane = |c: usize| &obs[c * NUM_POINTS..(c + 1) * NUM_POINTS];
    let (mut own, mut theirs) = (0u32, 0u32);
    for p in 0..NUM_POINTS {
        match (plane(0)[p], plane(1)[p], plane(2)[p]) {
            (o, t, e) if o == 1.0 && t == 0.0 && e == 0.0 => own |= 1 << p,
            (o, t, e) if o == 0.0 && t == 1.0 && e == 0.0 => theirs |= 1 << p,
            (o, t, e) if o == 0.0 && t == 0.0 && e == 1.0 => {}
            _ => return Err(format!("has point {p} neither own, opponent's nor empty (planes 0-2)")),
        }
    }
    // A count stored as `count / scale` on a constant plane.
    let count = |c: usize, scale: u32| -> Result<u32, String> {
        let v = plane(c)[0];
        if plane(c).iter().any(|&x| x != v) {
            return Err(format!("has plane {c} not constant"));
        }
        let scaled = v * scale as f32;
        let k = scaled.round();
        if !(0.0..=scale as f32).contains(&k) || (scaled - k).abs() > 1e-3 {
            return Err(format!("has plane {c} = {v}, not a count out of {scale}"));
        }
        Ok(k as u32)
    };
    let own_hand = count(3, 9)? as u8;
    let their_hand = count(4, 9)? as u8;
    let removal = count(5, 1)? == 1;
    let as_side = |side: Color| {
        let (white, black, hands) = match side {
            Color::White => (own, theirs, [own_hand, their_hand]),
            Color::Black => (theirs, own, [their_hand, own_hand]),
        };
        Position::from_parts(BitBoard(white), BitBoard(black), hands, side, removal)
    };
    let pos = as_side(Color::White)
        .or_else(|_| as_side(Color::Black))
        .map_err(|e| format!("shows no position a game can reach: {e}"))?;
    let quiet = match rules.n_move_rule {
        Some(n) if n > 0 => count(12, n)?,
        _ => 0,
    };
    let turns = match rules.turn_cap {
        Some(cap) if cap > 0 => count(14, cap)?,
        _ => u32::from(pos.turns()),
    };
    let pos = pos.with_counters(turns.min(u16::MAX as u32) as u16, quiet.min(u16::MAX as u32) as u16);
    let game = Game::from_position(*rules, pos);
    // Every plane but the repetition count must be what the rules encode for this game: this
    // catches observations made under other rules (a counter plane the rules do not have).
    let mut again = [0f32; OBS_LEN];
    encode(game.position(), rules, game.repetitions(), &mut again);
    for c in (0..NUM_PLANES).filter(|&c| c != REPETITION_PLANE) {
        if plane(c) != &again[c * NUM_POINTS..(c + 1) * NUM_POINTS] {
            return Err(format!(
                "has plane {c} unlike the observation of its position under these rules (made under other rules?)"
            ));
        }
    }
    Ok(game)
}
